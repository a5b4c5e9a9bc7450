//! The statistics behind the verdict: Wilson score intervals for pass rates, Newcombe's
//! interval for the difference of two rates, and the one-sided regression test on the sum of
//! per-scenario Bernoulli outcomes.

use serde::Serialize;

/// The standard normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of rates in 0.0..=1.0 (or of differences in -1.0..=1.0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
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

/// The predictive pass probability of a scenario that passed `passed` of `judged` baseline
/// runs: the posterior mean under a Jeffreys prior Beta(1/2, 1/2), `(passed + 0.5) /
/// (judged + 1)`. It never reaches 0 or 1, so a scenario seen passing a few times still
/// leaves room for a flake; more baseline runs make it sharper.
pub fn predictive_pass_probability(passed: usize, judged: usize) -> f64 {
    (passed as f64 + 0.5) / (judged as f64 + 1.0)
}

/// Counts of one scenario in the baseline window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioCounts {
    /// Baseline runs that passed.
    pub passed: usize,
    /// Baseline runs judged (passed + failed).
    pub judged: usize,
}

/// One compared scenario: its baseline counts and how many of its runs this run judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compared {
    /// The scenario's counts in the baseline window.
    pub baseline: ScenarioCounts,
    /// This run's judged runs of the scenario (its repetitions), at least 1.
    pub runs: usize,
}

/// One-sided p-value of observing `observed` passes or fewer over the runs `compared`
/// describes, if nothing changed: P(X <= observed).
///
/// X is a sum of Bernoulli outcomes, `runs` per scenario. Its mean is the sum of the runs'
/// baseline pass rates. Its variance adds, per scenario with r runs and Jeffreys estimate
/// q = (passed + 0.5) / (judged + 1), the runs' own Bernoulli variance r q(1-q) and the
/// uncertainty of the baseline's estimate of the rate, which all r runs share:
/// r^2 q(1-q) / judged (the variance of r times one estimated rate). The Jeffreys estimate
/// keeps a scenario that always passed possibly flaky. The normal approximation with a
/// continuity correction gives the tail. A scenario never judged in the baseline counts as a
/// coin flip. When every run passed (`observed` >= the runs), X cannot exceed `observed` and
/// the value is exactly 1, not the approximation's tail (about 0.55 for an unchanged 100% vs
/// 100%).
pub fn regression_p_value(observed: usize, compared: &[Compared]) -> f64 {
    let runs: usize = compared.iter().map(|c| c.runs).sum();
    if observed >= runs {
        return 1.0;
    }
    let (mean, variance) = null_moments(compared);
    if variance == 0.0 {
        return if (observed as f64) < mean { 0.0 } else { 1.0 };
    }
    normal_cdf((observed as f64 + 0.5 - mean) / variance.sqrt())
}

/// Mean and variance of the passes over `compared` if nothing changed (see
/// [`regression_p_value`]).
fn null_moments(compared: &[Compared]) -> (f64, f64) {
    let mut mean = 0.0;
    let mut variance = 0.0;
    for Compared { baseline, runs } in compared {
        let raw = if baseline.judged == 0 {
            0.5
        } else {
            baseline.passed as f64 / baseline.judged as f64
        };
        let smoothed = predictive_pass_probability(baseline.passed, baseline.judged);
        let spread = smoothed * (1.0 - smoothed);
        let r = *runs as f64;
        mean += r * raw;
        variance += r * spread + r * r * spread / baseline.judged.max(1) as f64;
    }
    (mean, variance)
}

/// The standard normal distribution function, via `erfc` (Numerical Recipes' Chebyshev fit,
/// fractional error below 1.2e-7).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let value = t * poly.exp();
    if x >= 0.0 { value } else { 2.0 - value }
}

#[cfg(test)]
mod tests {
    //! The statistics match published values: Wilson, Newcombe, normal CDF, regression test.

    use super::*;

    /// A scenario with `passed` of `judged` baseline runs, run once now.
    fn once(passed: usize, judged: usize) -> Compared {
        Compared {
            baseline: ScenarioCounts { passed, judged },
            runs: 1,
        }
    }

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
    fn normal_cdf_matches_tables() {
        assert!(close(normal_cdf(0.0), 0.5));
        assert!(close(normal_cdf(-1.644_853_6), 0.05));
        assert!(close(normal_cdf(1.959_964), 0.975));
    }

    #[test]
    fn a_drop_against_a_long_stable_baseline_is_significant() {
        let stable = [once(30, 30); 30];
        assert!(regression_p_value(24, &stable) < 0.001);
        assert!(regression_p_value(30, &stable) > 0.5);
        // One baseline run says little: two failures out of 30 are not significant.
        let single = [once(1, 1); 30];
        assert!(regression_p_value(28, &single) > 0.05);
    }

    #[test]
    fn no_drop_at_all_has_a_p_value_of_exactly_one() {
        let always = vec![once(3, 3); 36];
        assert_eq!(regression_p_value(36, &always), 1.0);
        assert!(regression_p_value(35, &always) < 1.0);
    }

    #[test]
    fn repeats_of_one_scenario_share_the_baselines_uncertainty() {
        // 12 scenarios, 7 of 7 baseline passes each, 3 runs each; 33 of 36 runs pass. Per
        // scenario q = 7.5 / 8, spread q(1-q) = 0.05859; r = 3: variance 3 x 0.05859 +
        // 9 x 0.05859 / 7 = 0.25112, x 12 = 3.0134; mean 36; z = (33.5 - 36) / 1.7359.
        let three = vec![
            Compared {
                baseline: ScenarioCounts {
                    passed: 7,
                    judged: 7,
                },
                runs: 3,
            };
            12
        ];
        let expected = normal_cdf((33.5 - 36.0) / 3.0134_f64.sqrt());
        assert!(close(regression_p_value(33, &three), expected));
        // The same 36 runs as 36 scenarios run once each: the baseline's uncertainty is not
        // shared, the variance smaller, the same drop more significant.
        assert!(regression_p_value(33, &vec![once(7, 7); 36]) < expected);
    }

    #[test]
    fn predictive_probability_shrinks_toward_one_half() {
        assert!(close(predictive_pass_probability(7, 7), 0.9375));
        assert!(close(predictive_pass_probability(0, 0), 0.5));
    }
}
