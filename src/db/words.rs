//! The turn's vocabulary (`actors::record`) and feedback's (`crate::feedback`) stored as its words in `text` columns: the
//! words are the ones the frames and the log line use, defined once beside the enums.

use std::io::Write;

use bor_actors::record::{TurnPath, TurnStatus};
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;

use crate::feedback::{Rating, Reason};

/// An enum of a fixed set of words.
pub trait Vocabulary: Copy + std::fmt::Debug + 'static {
    /// Every value.
    fn all() -> &'static [Self];
    /// The value's word.
    fn word(self) -> &'static str;
}

impl Vocabulary for TurnPath {
    fn all() -> &'static [Self] {
        &Self::ALL
    }
    fn word(self) -> &'static str {
        self.as_str()
    }
}

impl Vocabulary for TurnStatus {
    fn all() -> &'static [Self] {
        &Self::ALL
    }
    fn word(self) -> &'static str {
        self.as_str()
    }
}

impl Vocabulary for Rating {
    fn all() -> &'static [Self] {
        &Self::ALL
    }
    fn word(self) -> &'static str {
        self.as_str()
    }
}

impl Vocabulary for Reason {
    fn all() -> &'static [Self] {
        &Self::ALL
    }
    fn word(self) -> &'static str {
        self.as_str()
    }
}

/// A value of a [`Vocabulary`] as diesel reads and writes it: `#[diesel(serialize_as =
/// Word<T>)]` on an insertable field, `deserialize_as` on a queryable one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub struct Word<T: Vocabulary>(pub T);

impl<T: Vocabulary> From<T> for Word<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl From<Word<TurnPath>> for TurnPath {
    fn from(word: Word<TurnPath>) -> Self {
        word.0
    }
}

impl From<Word<TurnStatus>> for TurnStatus {
    fn from(word: Word<TurnStatus>) -> Self {
        word.0
    }
}

impl<T: Vocabulary> ToSql<Text, Pg> for Word<T> {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(self.0.word().as_bytes())?;
        Ok(IsNull::No)
    }
}

impl<T: Vocabulary> FromSql<Text, Pg> for Word<T> {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        let bytes = value.as_bytes();
        T::all()
            .iter()
            .find(|known| known.word().as_bytes() == bytes)
            .map(|&known| Self(known))
            .ok_or_else(|| {
                format!(
                    "unexpected {} {:?}",
                    std::any::type_name::<T>(),
                    String::from_utf8_lossy(bytes)
                )
                .into()
            })
    }
}
