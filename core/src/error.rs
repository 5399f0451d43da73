//! The error type every `core` computation returns.

/// Why a computation could not produce a result.
///
/// [`Error::InvalidParam`] is the user's to fix (the CLI exits with status 2 and the GUI shows
/// the message next to the control); the other variants describe bad input files or I/O.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A parameter is outside its valid range or inconsistent with another parameter.
    #[error("invalid parameter `{name}` = {value}: {expected}")]
    InvalidParam {
        /// The parameter's name as `--set` spells it.
        name: String,
        /// The offending value, as given.
        value: String,
        /// What would be valid (a range, a list of choices, a divisibility rule).
        expected: String,
    },
    /// No scene has this id (see `warpscope list`).
    #[error("unknown scene `{0}`; `warpscope list` prints the scene ids")]
    UnknownScene(String),
    /// An input file could not be read or is not what it claims to be.
    #[error("{0}")]
    BadInput(String),
    /// The computation was cancelled through its [`crate::progress::Progress`] handle (the
    /// window cancels a running computation when a newer parameter value arrives).
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// Shorthand for [`Error::InvalidParam`].
    pub fn invalid(
        name: impl Into<String>,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Error::InvalidParam {
            name: name.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
