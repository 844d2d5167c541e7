//! The adaptive limit: a controller that moves the admission limit toward the knee, where
//! throughput stops growing and response time starts to (book 4.8.2).
//!
//! The knee is taken in Kleinrock's sense: the load that maximises *power*, throughput
//! divided by response time (L. Kleinrock, "Power and deterministic rules of thumb for
//! probabilistic problems in computer communications", ICC 1979; the same operating point
//! BBR aims TCP at, Cardwell et al., ACM Queue 2016). Below the knee more concurrency raises
//! throughput more than it raises the time inside; past it, throughput is flat or falls and
//! the time inside only grows, so power falls on both sides of the knee. The controller climbs
//! that hill, as a gradient concurrency limiter does (Netflix's `concurrency-limits`), but
//! on power instead of latency alone: it needs no "no-load latency" baseline, which drifts
//! and must be re-probed, and it follows a workload that changes.
//!
//! Every other window (a window is at least `window` long, twice the last window's median
//! time inside, and `min_samples` finished transactions; the window after a change of the
//! limit only lets the change settle, since what finishes in it mostly entered before):
//!
//! ```text
//!  X     = transactions finished / window duration        throughput
//!  R     = median time inside of the window's transactions
//!  power = X / R
//!  if power fell below the previous window's by more than `tolerance`: reverse direction
//!  step  = step_percent, doubled (up to 8 times) for every window in which power grew by
//!          more than half the step: a steep hill means the knee is still far (below it,
//!          power grows about as the limit does); near it power changes little, and the
//!          step falls back to step_percent
//!  limit = limit + step or limit - step, by direction (at least ±1),
//!          never up while fewer than limit / 2 were inside (the limit did not bind, so
//!          the window says nothing about more), clamped to [min, max]
//! ```
//!
//! So the limit oscillates by about one step around the knee. The median keeps one slow
//! transaction from turning the controller; `tolerance` keeps noise from turning it at every
//! window. Its parameters are in [`AdaptiveConfig`].

use std::time::Duration;

use std::time::Instant;

/// The adaptive limit's parameters; [`AdaptiveConfig::default`] is what the benchmarks use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdaptiveConfig {
    /// The limit to start from.
    pub initial: usize,
    /// The limit never goes below this.
    pub min: usize,
    /// The limit never goes above this.
    pub max: usize,
    /// A window lasts at least this long (and twice the last median time inside)...
    pub window: Duration,
    /// ...and holds at least this many completed transactions.
    pub min_samples: usize,
    /// The controller turns round only if power fell by more than this many percent.
    pub tolerance_percent: u32,
    /// One step, in percent of the limit (at least 1).
    pub step_percent: u32,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            initial: 16,
            min: 1,
            max: 10_000,
            window: Duration::from_millis(50),
            min_samples: 32,
            tolerance_percent: 2,
            step_percent: 10,
        }
    }
}

impl AdaptiveConfig {
    /// Checks the parameters that can be wrong.
    pub fn validate(&self) -> Result<(), crate::ThrottleError> {
        let bad = |what: &str| Err(crate::ThrottleError::Config(what.to_owned()));
        if self.min == 0 || self.min > self.max {
            return bad("adaptive limits need 1 <= min <= max");
        }
        if !(self.min..=self.max).contains(&self.initial) {
            return bad("the initial adaptive limit must lie in [min, max]");
        }
        if self.tolerance_percent >= 100 {
            return bad("tolerance_percent must be below 100");
        }
        if self.step_percent == 0 || self.step_percent > 100 {
            return bad("step_percent must be in 1..=100");
        }
        Ok(())
    }
}

/// The controller's state: the limit, where it is heading, and the window being filled.
#[derive(Debug)]
pub(crate) struct Controller {
    config: AdaptiveConfig,
    limit: usize,
    up: bool,
    /// Windows in a row moved the same way.
    streak: u32,
    last_power: Option<f64>,
    window_start: Option<Instant>,
    samples: Vec<f64>,
    max_inside: usize,
    /// The last window's median time inside.
    last_rtt: Duration,
    /// The limit changed at the end of the last window: this window only lets it settle.
    settling: bool,
}

impl Controller {
    pub(crate) fn new(config: AdaptiveConfig) -> Controller {
        Controller {
            config,
            limit: config.initial,
            up: true,
            streak: 0,
            last_power: None,
            window_start: None,
            samples: Vec::new(),
            max_inside: 0,
            last_rtt: Duration::ZERO,
            settling: false,
        }
    }

    /// Records one transaction that spent `rtt` inside while `inside` were inside; returns
    /// the new limit when this closes a window.
    pub(crate) fn sample(&mut self, rtt: Duration, inside: usize, now: Instant) -> Option<usize> {
        let start = *self.window_start.get_or_insert(now);
        self.samples.push(rtt.as_secs_f64());
        self.max_inside = self.max_inside.max(inside);
        let elapsed = now.duration_since(start);
        let long_enough = elapsed >= self.config.window.max(self.last_rtt * 2);
        if self.samples.len() < self.config.min_samples || !long_enough {
            return None;
        }
        self.samples.sort_by(f64::total_cmp);
        let median = self.samples[self.samples.len() / 2];
        self.last_rtt = Duration::from_secs_f64(median);
        let throughput = self.samples.len() as f64 / elapsed.as_secs_f64();
        let idle = self.max_inside < self.limit / 2;
        self.samples.clear();
        self.max_inside = 0;
        self.window_start = Some(now);
        if std::mem::take(&mut self.settling) {
            return None;
        }
        let limit = self.update(throughput, median, idle);
        self.settling = true;
        Some(limit)
    }

    /// One window's step (see the module page).
    pub(crate) fn update(&mut self, throughput: f64, rtt: f64, idle: bool) -> usize {
        let power = throughput / rtt.max(f64::MIN_POSITIVE);
        let tolerance = 1.0 - f64::from(self.config.tolerance_percent) / 100.0;
        let base = f64::from(self.config.step_percent) / 100.0;
        let percent = match self.last_power {
            Some(last) if power < last * tolerance => {
                self.up = !self.up;
                self.streak = 0;
                self.config.step_percent as usize
            }
            Some(last) => {
                // Power grew by at least half the last step: the hill is steep here (below
                // the knee, power grows about as the limit does), the knee still far; take
                // bigger steps.
                let step = base * f64::from(1u32 << self.streak);
                self.streak = if power > last * (1.0 + step / 2.0) {
                    (self.streak + 1).min(3)
                } else {
                    0
                };
                (self.config.step_percent as usize) << self.streak
            }
            None => self.config.step_percent as usize,
        };
        self.last_power = Some(power);
        let step = (self.limit * percent.min(100) / 100).max(1);
        if self.up && !idle {
            self.limit = self.limit.saturating_add(step);
        } else if !self.up {
            self.limit = self.limit.saturating_sub(step);
        }
        self.limit = self.limit.clamp(self.config.min, self.config.max);
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resource that serves `k` at a time, each entry taking longer the more are inside
    /// (`c` per entry, like copying a longer active list): the time inside at concurrency
    /// `n`. Throughput is `n / time` (a closed system); power `n / time^2` peaks at `n = k`.
    fn model(k: f64, c: f64, n: f64) -> f64 {
        (1.0 + c * n) * (n / k).max(1.0)
    }

    /// The limits of 600 windows against the model, from `initial`.
    fn run(k: f64, c: f64, clients: f64, initial: usize) -> Vec<usize> {
        let mut controller = Controller::new(AdaptiveConfig {
            initial,
            ..AdaptiveConfig::default()
        });
        let mut limits = Vec::new();
        for _ in 0..600 {
            let n = (controller.limit as f64).min(clients);
            let idle = n < controller.limit as f64 / 2.0;
            let rtt = model(k, c, n);
            limits.push(controller.update(n / rtt, rtt, idle));
        }
        limits
    }

    fn settle(k: f64, c: f64, clients: f64, initial: usize) {
        let limits = run(k, c, clients, initial);
        // The last 100 windows: it must oscillate around the knee by a step or two, and
        // stay there, not only pass by.
        let tail = &limits[500..];
        let (lo, hi) = (*tail.iter().min().unwrap(), *tail.iter().max().unwrap());
        assert!(
            lo as f64 >= 0.75 * k - 1.0 && hi as f64 <= 1.3 * k + 2.0,
            "knee {k}, overhead {c}, from {initial}: oscillates in {lo}..={hi}"
        );
    }

    #[test]
    fn the_limit_settles_near_the_knee_from_below_and_from_above() {
        for (k, c) in [(8.0, 0.01), (32.0, 0.01), (32.0, 0.0), (128.0, 0.002)] {
            for initial in [1, 5_000] {
                settle(k, c, 10_000.0, initial);
            }
        }
    }

    #[test]
    fn an_idle_limit_does_not_grow() {
        let limits = run(1_000.0, 0.0, 20.0, 50);
        assert!(limits.iter().all(|&limit| limit <= 50), "{limits:?}");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let bad = [
            AdaptiveConfig {
                min: 0,
                ..AdaptiveConfig::default()
            },
            AdaptiveConfig {
                initial: 20_000,
                ..AdaptiveConfig::default()
            },
            AdaptiveConfig {
                tolerance_percent: 100,
                ..AdaptiveConfig::default()
            },
            AdaptiveConfig {
                step_percent: 0,
                ..AdaptiveConfig::default()
            },
        ];
        for config in bad {
            assert!(config.validate().is_err(), "{config:?}");
        }
        assert!(AdaptiveConfig::default().validate().is_ok());
    }
}
