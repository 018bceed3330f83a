//! How each variable's value appears in the operators' view of the configuration
//! (`ConfigView`, `Config`'s `Debug`): the functions named after `=>` in the list of
//! variables.

use std::fmt::Display;
use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

use super::Secret;

/// Whether a secret is configured; the secret itself is never shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretState {
    Set,
    Unset,
}

pub(super) fn secret_state(secret: &Option<Secret>) -> SecretState {
    match secret {
        Some(_) => SecretState::Set,
        None => SecretState::Unset,
    }
}

pub(super) fn display<T: Display>(value: &T) -> String {
    value.to_string()
}

pub(super) fn cloned<T: Clone>(value: &T) -> T {
    value.clone()
}

pub(super) fn copied<T: Copy>(value: &T) -> T {
    *value
}

pub(super) fn seconds_of(duration: &Duration) -> f64 {
    duration.as_secs_f64()
}

/// As written (0.35), not as the nearest f64 of the f32 (0.3499999940395355).
pub(super) fn rounded(value: &f32) -> f64 {
    (f64::from(*value) * 1e6).round() / 1e6
}
