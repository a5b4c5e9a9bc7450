//! Backpressure shared by every request to one provider endpoint: when the provider answers
//! 429, all runs of the suite slow down together instead of each retrying on its own until
//! its attempts run out.
//!
//! The rule is additive-increase / multiplicative-decrease, as TCP congestion control and
//! most client-side rate limiters do it: a 429 halves the number of requests allowed in
//! flight (at least one) and holds every new request until the provider's `Retry-After` has
//! passed; each run of successes as long as the limit raises it by one, up to no limit at all.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The shared in-flight limit and pause of one endpoint.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    state: Mutex<State>,
    /// Woken when a permit is released or the limit grows.
    released: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Requests allowed in flight; `None` until the first 429 (no limit of its own).
    limit: Option<usize>,
    in_flight: usize,
    /// No request starts before this instant.
    resume_at: Option<Instant>,
    /// Successes since the limit last changed.
    successes: usize,
}

/// One request's place in flight; released on drop.
pub(crate) struct Permit<'a> {
    throttle: &'a Throttle,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.throttle.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        drop(state);
        self.throttle.released.notify_waiters();
    }
}

impl Throttle {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent under a panic elsewhere: every update is one assignment.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until the endpoint is not paused and a place is free, then takes it.
    pub(crate) async fn acquire(&self) -> Permit<'_> {
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            // Registered before the state is read, so a release in between is not missed.
            released.as_mut().enable();
            let pause = {
                let mut state = self.lock();
                let now = Instant::now();
                match state.resume_at {
                    Some(at) if at > now => Some(at),
                    _ => {
                        if state.limit.is_none_or(|limit| state.in_flight < limit) {
                            state.in_flight += 1;
                            return Permit { throttle: self };
                        }
                        None
                    }
                }
            };
            match pause {
                Some(at) => tokio::time::sleep_until(at).await,
                None => released.await,
            }
        }
    }

    /// Records a 429: halves the limit (from what was in flight, the first time) and pauses
    /// new requests for `wait` from now (never shortening a pause already set).
    pub(crate) fn rate_limited(&self, wait: Duration) {
        let mut state = self.lock();
        let current = state.limit.unwrap_or(state.in_flight.max(1));
        state.limit = Some((current / 2).max(1));
        state.successes = 0;
        let until = Instant::now() + wait;
        state.resume_at = Some(state.resume_at.map_or(until, |at| at.max(until)));
    }

    /// Records a success: after as many successes as the limit, the limit grows by one.
    pub(crate) fn succeeded(&self) {
        let mut state = self.lock();
        let Some(limit) = state.limit else {
            return;
        };
        state.successes += 1;
        if state.successes >= limit {
            state.limit = Some(limit + 1);
            state.successes = 0;
            drop(state);
            self.released.notify_waiters();
        }
    }

    /// The current in-flight limit; `None` while unlimited.
    #[cfg(test)]
    pub(crate) fn limit(&self) -> Option<usize> {
        self.lock().limit
    }
}

#[cfg(test)]
mod tests {
    //! Backpressure: a 429 halves the limit, successes raise it, and a pause holds new requests.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_rate_limit_halves_the_limit_and_successes_raise_it_by_one_per_round() {
        let throttle = Throttle::default();
        let permits: Vec<Permit<'_>> =
            futures::future::join_all((0..8).map(|_| throttle.acquire())).await;
        assert_eq!(throttle.limit(), None);
        throttle.rate_limited(Duration::ZERO);
        assert_eq!(throttle.limit(), Some(4));
        throttle.rate_limited(Duration::ZERO);
        assert_eq!(throttle.limit(), Some(2));
        drop(permits);
        throttle.succeeded();
        assert_eq!(throttle.limit(), Some(2));
        throttle.succeeded();
        assert_eq!(throttle.limit(), Some(3));
        for _ in 0..3 {
            throttle.succeeded();
        }
        assert_eq!(throttle.limit(), Some(4));
        throttle.rate_limited(Duration::ZERO);
        throttle.rate_limited(Duration::ZERO);
        throttle.rate_limited(Duration::ZERO);
        assert_eq!(throttle.limit(), Some(1), "never below one");
    }

    #[tokio::test]
    async fn no_more_than_the_limit_are_in_flight_and_waiters_go_on_release() {
        let throttle = Arc::new(Throttle::default());
        throttle.rate_limited(Duration::ZERO);
        assert_eq!(throttle.limit(), Some(1));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..6)
            .map(|_| {
                let (throttle, in_flight, most) = (
                    Arc::clone(&throttle),
                    Arc::clone(&in_flight),
                    Arc::clone(&most),
                );
                tokio::spawn(async move {
                    let _permit = throttle.acquire().await;
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("the task ends");
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_holds_every_new_request_until_it_ends() {
        let throttle = Throttle::default();
        let started = Instant::now();
        throttle.rate_limited(Duration::from_secs(2));
        // A shorter pause later does not cut the first one short.
        throttle.rate_limited(Duration::from_millis(10));
        let _permit = throttle.acquire().await;
        assert!(started.elapsed() >= Duration::from_secs(2));
    }
}
