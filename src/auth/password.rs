//! Passwords: argon2id (the `argon2` crate's defaults, OWASP's minimum: 19 MiB, two
//! passes) in PHC form. A sign-in for an unknown user still verifies a password
//! against a hash made at start, so both answers take about the same time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};

use super::secret::{RandomError, random_hex};

/// Characters a new password has at least (docs/LIMITS.md).
pub const MIN_PASSWORD_CHARS: usize = 12;
/// Characters a password has at most (hashing a megabyte is a way to burn CPU).
pub const MAX_PASSWORD_CHARS: usize = 1024;
/// Random bytes of a generated password (shown as hex: 24 characters).
const GENERATED_PASSWORD_BYTES: usize = 12;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error(transparent)]
    Random(#[from] RandomError),
    #[error("the password could not be hashed: {0}")]
    Hash(String),
}

/// The rule a new password must meet; `Err` says it.
pub fn check_new_password(password: &str) -> Result<(), String> {
    let chars = password.chars().count();
    if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
        Ok(())
    } else {
        Err(format!(
            "a password has {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters"
        ))
    }
}

/// A new random password, for people made by an admin or by `make run`.
pub fn generate_password() -> Result<String, RandomError> {
    random_hex(GENERATED_PASSWORD_BYTES)
}

/// The argon2id hash of `password`, in PHC form, with a fresh salt.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|error| PasswordError::Hash(error.to_string()))?;
    let salt =
        SaltString::encode_b64(&salt).map_err(|error| PasswordError::Hash(error.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|error| PasswordError::Hash(error.to_string()))
}

/// A hash no password is known for, verified against when there is no user (or the
/// user has no password), so the time does not tell.
static DUMMY_HASH: LazyLock<Option<String>> = LazyLock::new(|| {
    random_hex(GENERATED_PASSWORD_BYTES)
        .ok()
        .and_then(|password| hash_password(&password).ok())
});

/// Verifies passwords, counting every verification (the tests see that an unknown
/// user costs one too); a clone, which a blocking thread takes, counts with it.
#[derive(Debug, Default, Clone)]
pub struct Verifier {
    verifications: Arc<AtomicU64>,
}

impl Verifier {
    /// Whether `password` matches `stored`; with no stored hash a dummy one is checked
    /// and the answer is no. Slow on purpose: call it off the async workers.
    pub fn verify(&self, password: &str, stored: Option<&str>) -> bool {
        self.verifications.fetch_add(1, Ordering::Relaxed);
        let (hash, known) = match stored {
            Some(stored) => (Some(stored), true),
            None => (DUMMY_HASH.as_deref(), false),
        };
        let matches = hash
            .and_then(|hash| PasswordHash::new(hash).ok())
            .is_some_and(|hash| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &hash)
                    .is_ok()
            });
        known && matches
    }

    /// Passwords verified so far.
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// Makes the dummy hash now, so the first unknown user is not slower than later
    /// ones.
    pub fn prepare(&self) {
        LazyLock::force(&DUMMY_HASH);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let verifier = Verifier::default();
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verifier.verify("correct horse battery", Some(&hash)));
        assert!(!verifier.verify("correct horse batter", Some(&hash)));
        assert!(!verifier.verify("anything", Some("not a hash")));
        assert_eq!(verifier.verifications(), 3);
    }

    #[test]
    fn no_stored_hash_still_verifies_one_and_says_no() {
        let verifier = Verifier::default();
        assert!(!verifier.verify("", None));
        assert_eq!(verifier.verifications(), 1);
        assert!(DUMMY_HASH.is_some());
    }

    #[test]
    fn new_passwords_have_their_bounds() {
        assert!(check_new_password(&"x".repeat(11)).is_err());
        assert!(check_new_password(&"é".repeat(12)).is_ok());
        assert!(check_new_password(&"x".repeat(1024)).is_ok());
        assert!(check_new_password(&"x".repeat(1025)).is_err());
        assert!(check_new_password(&generate_password().unwrap()).is_ok());
    }
}
