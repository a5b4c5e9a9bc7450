//! The statistics behind the verdict: Wilson score intervals for pass rates, Newcombe's
//! interval for the difference of two rates, and the exact Poisson-binomial lower tail used
//! for the one-sided regression test.

use serde::Serialize;

/// The standard normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of rates in 0.0..=1.0 (or of differences in -1.0..=1.0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound, >= `low`.
    pub high: f64,
}

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z` (Wilson
/// 1927; recommended over the Wald interval by Brown, Cai and DasGupta 2001). `None` when
/// `trials` is 0.
pub fn wilson(successes: usize, trials: usize, z: f64) -> Option<Interval> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// The interval of `p1 - p2` from two Wilson intervals: Newcombe's hybrid score method
/// (Newcombe 1998, method 10). `p1 = x1/n1` with interval `i1`, likewise for 2.
pub fn difference(p1: f64, i1: Interval, p2: f64, i2: Interval) -> Interval {
    let delta = p1 - p2;
    Interval {
        low: delta - ((p1 - i1.low).powi(2) + (i2.high - p2).powi(2)).sqrt(),
        high: delta + ((i1.high - p1).powi(2) + (p2 - i2.low).powi(2)).sqrt(),
    }
}

/// P(X <= `observed`) where X is the number of successes of independent trials with success
/// probabilities `probabilities` (each in 0.0..=1.0): the exact Poisson-binomial lower tail,
/// by dynamic programming in O(n^2).
pub fn poisson_binomial_lower_tail(probabilities: &[f64], observed: usize) -> f64 {
    // distribution[k] = P(k successes among the trials seen so far)
    let mut distribution = vec![0.0; probabilities.len() + 1];
    distribution[0] = 1.0;
    for (seen, &p) in probabilities.iter().enumerate() {
        for k in (0..=seen + 1).rev() {
            let stay = distribution[k] * (1.0 - p);
            let step = if k > 0 { distribution[k - 1] * p } else { 0.0 };
            distribution[k] = stay + step;
        }
    }
    distribution
        .iter()
        .take(observed + 1)
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

/// The predictive pass probability of a scenario that passed `passed` of `judged` baseline
/// runs: the posterior mean under a Jeffreys prior Beta(1/2, 1/2), `(passed + 0.5) /
/// (judged + 1)`. It never reaches 0 or 1, so a scenario seen passing a few times still
/// leaves room for a flake; more baseline runs make it sharper.
pub fn predictive_pass_probability(passed: usize, judged: usize) -> f64 {
    (passed as f64 + 0.5) / (judged as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn wilson_matches_published_values() {
        // Newcombe 1998, table I: 81/263 -> 0.2553 to 0.3662; 0/10 -> 0 to 0.2775.
        let i = wilson(81, 263, Z_95).expect("trials");
        assert!(close(i.low, 0.2553) && close(i.high, 0.3662), "{i:?}");
        let i = wilson(0, 10, Z_95).expect("trials");
        assert!(close(i.low, 0.0) && close(i.high, 0.2775), "{i:?}");
        assert_eq!(wilson(0, 0, Z_95), None);
    }

    #[test]
    fn difference_matches_newcombe_method_10() {
        // Newcombe 1998, table II example (a): 56/70 - 48/80 -> 0.0524 to 0.3339.
        let (p1, p2) = (56.0 / 70.0, 48.0 / 80.0);
        let i = difference(
            p1,
            wilson(56, 70, Z_95).expect("trials"),
            p2,
            wilson(48, 80, Z_95).expect("trials"),
        );
        assert!(close(i.low, 0.0524) && close(i.high, 0.3339), "{i:?}");
    }

    #[test]
    fn poisson_binomial_equals_the_binomial_for_equal_probabilities() {
        // Binomial(10, 0.5): P(X <= 2) = 56/1024.
        let tail = poisson_binomial_lower_tail(&[0.5; 10], 2);
        assert!(close(tail, 56.0 / 1024.0), "{tail}");
        assert!(close(poisson_binomial_lower_tail(&[0.9; 4], 4), 1.0));
        assert!(close(poisson_binomial_lower_tail(&[1.0, 0.0], 0), 0.0));
    }

    #[test]
    fn predictive_probability_shrinks_toward_one_half() {
        assert!(close(predictive_pass_probability(7, 7), 0.9375));
        assert!(close(predictive_pass_probability(0, 0), 0.5));
    }
}
