//! What a command that failed says, and the exit code it ends with: every
//! command returns `Result<ExitCode, CliError>`, and `main` alone prints
//! the message and exits with the code.

use std::fmt;
use std::process::ExitCode;

/// A command's failure: its message (the whole line, the program's name
/// and command included) and, by its kind, the exit code.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Refused before anything ran: an argument, a configuration value, a
    /// symbol the venue does not list, a core or priority the machine
    /// will not give, an output that cannot be written. Exit 2.
    Refused(String),
    /// No venue ever connected (a supervisor tells it from a bad
    /// configuration and from a failure while running). Exit 3.
    NeverConnected(String),
    /// Anything else: what ran failed, or what it needed was not there
    /// (a list that could not be fetched, a damaged recording). Exit 1.
    Failed(String),
}

impl CliError {
    /// The exit code the failure ends the program with.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            CliError::Failed(_) => 1,
            CliError::Refused(_) => 2,
            CliError::NeverConnected(_) => 3,
        })
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Refused(m) | CliError::NeverConnected(m) | CliError::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A command's outcome: its exit code when it ran to the end (a success,
/// or a failure it has already said), or a failure `main` says.
pub(crate) type CliResult = Result<ExitCode, CliError>;

#[cfg(test)]
mod tests {
    use super::CliError;
    use std::process::ExitCode;

    #[test]
    fn each_kind_ends_with_its_code() {
        assert_eq!(CliError::Failed("x".into()).exit_code(), ExitCode::from(1));
        assert_eq!(CliError::Refused("x".into()).exit_code(), ExitCode::from(2));
        assert_eq!(
            CliError::NeverConnected("x".into()).exit_code(),
            ExitCode::from(3)
        );
        assert_eq!(
            CliError::Refused("said as is".into()).to_string(),
            "said as is"
        );
    }
}
