//! `bor user add NAME [--admin] [--password-stdin]`, `bor user list`,
//! `bor user passwd NAME [--password-stdin]`, `bor user disable NAME`: the people of
//! `BOR_AUTH=accounts`, from the machine bor runs on. A password is generated and
//! printed unless one is given on stdin; changing it or disabling the user ends their
//! sessions. The rules are the admin API's (`auth/people.rs`): the last admin who is
//! not disabled is never disabled.

use std::io::BufRead;
use std::process::ExitCode;

use clap::Subcommand;

use crate::audit::{self, Action, Event};
use crate::auth::password::generate_password;
use crate::auth::people::{self, PeopleError};
use crate::config::Config;
use crate::db::users::{self, Role, UserChanges};
use crate::db::{self, DbPool};

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Make a user; prints their generated password (or reads one from stdin).
    Add {
        name: String,
        /// An admin (manages documents and people) instead of a member.
        #[arg(long)]
        admin: bool,
        /// Read the password from the first line of stdin instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
    /// List the users with their role and state.
    List,
    /// Give a user a new password (generated and printed, or read from stdin); their
    /// sessions end.
    Passwd {
        name: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// Disable a user: their sessions and keys stop working at once.
    Disable { name: String },
}

#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("{0}")]
    Said(String),
    #[error(transparent)]
    Database(#[from] db::DbError),
}

impl From<PeopleError> for Failure {
    fn from(error: PeopleError) -> Self {
        match error {
            PeopleError::Db(error) => Failure::Database(error),
            error => Failure::Said(error.to_string()),
        }
    }
}

/// Runs the command; a failure is one line on stderr and a non-zero exit.
pub async fn run(config: &Config, command: UserCommand) -> ExitCode {
    match execute(config, command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bor user: {}", bor_actors::error_chain(&error));
            ExitCode::FAILURE
        }
    }
}

async fn execute(config: &Config, command: UserCommand) -> Result<(), Failure> {
    db::run_migrations(&config.database_url).await?;
    // Two: the command's own connection and the audit trail's.
    let pool = DbPool::new(&config.database_url, 2)?;
    let mut conn = pool.get().await?;
    match command {
        UserCommand::Add {
            name,
            admin,
            password_stdin,
        } => {
            let role = if admin { Role::Admin } else { Role::Member };
            let given = password_stdin.then(read_password).transpose()?;
            let (row, generated) = people::create_user(&mut conn, &name, None, role, given).await?;
            let made = Event::of_command_line(Action::UserCreated, &row.username)
                .with(serde_json::json!({"user_id": row.id, "role": row.role}));
            audit::record(&pool, made).await;
            println!("made {} {} ({})", row.role().as_str(), row.username, row.id);
            if let Some(password) = generated {
                println!("password: {password}");
            }
        }
        UserCommand::List => {
            for user in users::list(&mut conn).await? {
                let state = if user.disabled { "disabled" } else { "active" };
                println!(
                    "{:<24} {:<7} {:<9} {}",
                    user.username,
                    user.role().as_str(),
                    state,
                    user.id
                );
            }
        }
        UserCommand::Passwd {
            name,
            password_stdin,
        } => {
            let user = find(&mut conn, &name).await?;
            let (password, generated) = if password_stdin {
                (read_password()?, false)
            } else {
                (
                    generate_password().map_err(|error| Failure::Said(error.to_string()))?,
                    true,
                )
            };
            let changes = UserChanges {
                password_hash: Some(people::new_password_hash(password.clone()).await?),
                ..UserChanges::default()
            };
            people::update_user(&mut conn, None, user.id, &changes).await?;
            let changed = Event::of_command_line(Action::UserChanged, &user.username)
                .with(serde_json::json!({"password": true}));
            audit::record(&pool, changed).await;
            println!("new password for {}", user.username);
            if generated {
                println!("password: {password}");
            }
        }
        UserCommand::Disable { name } => {
            let user = find(&mut conn, &name).await?;
            let changes = UserChanges {
                disabled: Some(true),
                ..UserChanges::default()
            };
            people::update_user(&mut conn, None, user.id, &changes).await?;
            let changed = Event::of_command_line(Action::UserChanged, &user.username)
                .with(serde_json::json!({"disabled": true}));
            audit::record(&pool, changed).await;
            println!("disabled {}", user.username);
        }
    }
    Ok(())
}

async fn find(
    conn: &mut diesel_async::AsyncPgConnection,
    name: &str,
) -> Result<users::UserRow, Failure> {
    users::find_by_username(conn, name)
        .await?
        .ok_or_else(|| Failure::Said(format!("there is no user {name}")))
}

/// The first line of stdin, without its line end.
fn read_password() -> Result<String, Failure> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|error| Failure::Said(format!("cannot read the password from stdin: {error}")))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
