//! Usernames (docs/AUTH.md, "Usernames"): the one rule every name must fit, however it
//! arrives (an admin, `bor user add`, an identity provider, a trusted proxy), and the
//! one key they are compared by: the sign-in limiter counts it, the account lookup
//! matches it and the unique index holds it, so that no spelling of a name counts as
//! another for one of them and as the same for another.

/// Characters a username has at most.
pub const MAX_USERNAME_CHARS: usize = 64;

/// The rule, as refusals say it.
pub const RULE: &str = "1 to 64 letters, digits, '.', '_', '-' or '@'";

/// Whether `name` fits the rule: 1 to [`MAX_USERNAME_CHARS`] letters, digits, `.`,
/// `_`, `-` or `@`.
pub fn fits(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_USERNAME_CHARS
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

/// Characters a display name has at most.
pub const MAX_DISPLAY_NAME_CHARS: usize = 64;

/// Whether `name`, trimmed, is a display name: 1 to [`MAX_DISPLAY_NAME_CHARS`]
/// characters of any kind (U+0000 is refused at the edge already).
pub fn display_name_fits(name: &str) -> bool {
    (1..=MAX_DISPLAY_NAME_CHARS).contains(&name.trim().chars().count())
}

/// The key usernames are compared by: Unicode lower case (so `Ann` and `ann` are one
/// name, and `İris`, whose lower case is `i̇ris`, is not `iris`).
pub fn key(name: &str) -> String {
    name.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_takes_letters_digits_and_four_marks() {
        for name in [
            "ann",
            "Ann.Smith",
            "ann_s-2",
            "ann@example.com",
            "İris",
            "zoë",
        ] {
            assert!(fits(name), "{name}");
        }
        let too_long = "a".repeat(MAX_USERNAME_CHARS + 1);
        for name in [
            "",
            "erin, admin1",
            "<img src=x onerror=alert(1)>",
            "ann\u{202E}nimda",
            "a\0b",
            "ann smith",
            too_long.as_str(),
        ] {
            assert!(!fits(name), "{name:?}");
        }
    }

    #[test]
    fn one_key_for_every_case_of_a_name_and_another_for_a_dotted_capital_i() {
        assert_eq!(key("Ann"), key("ann"));
        assert_eq!(key("ÄRGER"), key("ärger"));
        assert_ne!(key("İris"), key("iris"));
        assert_eq!(key("İris"), key("i\u{307}ris"));
    }
}
