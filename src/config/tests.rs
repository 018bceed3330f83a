use super::*;
use std::ffi::OsString;

fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    Config::from_vars(
        vars.iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
    )
}

/// The single problem reported for `name=value`.
fn problem(name: &str, value: &str) -> String {
    let error = config(&[(name, value)]).expect_err("the value should be rejected");
    assert_eq!(error.problems().len(), 1, "{error}");
    error.problems()[0].clone()
}

fn accepted(name: &str, value: &str) -> Config {
    config(&[(name, value)]).unwrap_or_else(|error| panic!("{name}={value:?}: {error}"))
}

#[test]
fn defaults_match_env_example() {
    let config = config(&[]).unwrap();
    assert_eq!(config.bind, "127.0.0.1:8000".parse().unwrap());
    assert_eq!(
        config.database_url,
        "postgres://postgres@127.0.0.1:5432/bor"
    );
    assert_eq!(config.db_pool_size, 8);
    assert_eq!(config.llm_base_url, "http://127.0.0.1:18089/v1");
    assert_eq!(config.llm_embed_base_url, None);
    assert_eq!(config.llm_embed_url(), "http://127.0.0.1:18089/v1");
    assert_eq!(config.llm_api_key, None);
    assert_eq!(config.llm_chat_model, "smollm2");
    assert_eq!(config.llm_embed_model, "smollm2");
    assert_eq!(config.llm_retries, 3);
    assert_eq!(config.llm_retry_delay, Duration::from_secs(5));
    assert_eq!(config.llm_connect_timeout, Duration::from_secs(10));
    assert_eq!(config.llm_read_timeout, Duration::from_secs(120));
    assert_eq!(config.llm_temperature, None);
    assert!(config.agent_enabled);
    assert_eq!(config.agent_max_rounds, 4);
    assert_eq!(config.retrieval_top_k, 5);
    assert_eq!(config.deflect_threshold, 0.35);
    assert_eq!(config.max_message_chars, 8000);
    assert_eq!(config.max_concurrent_turns, 256);
    assert_eq!(config.chunk_chars, 1200);
    assert_eq!(config.chunk_overlap, 150);
    assert_eq!(config.admin_token, None);
    assert!(!config.llm_thinking_forced_open);
    assert_eq!(config.sse_keepalive, Duration::from_secs(5));
    assert_eq!(config.shutdown_grace, Duration::from_secs(30));
    assert_eq!(config.log, "info");
    assert_eq!(config.auth, AuthMode::Accounts);
    assert_eq!(config.public_url, None);
}

#[test]
fn auth_off_is_refused_on_an_address_other_than_loopback() {
    assert_eq!(accepted("BOR_AUTH", "off").auth, AuthMode::Off);
    assert_eq!(accepted("BOR_AUTH", "Accounts").auth, AuthMode::Accounts);
    assert_eq!(
        problem("BOR_AUTH", "none"),
        "BOR_AUTH=\"none\" is invalid: expected accounts or off"
    );
    let error = config(&[("BOR_AUTH", "off"), ("BOR_BIND", "0.0.0.0:8000")]).unwrap_err();
    assert_eq!(
        error.problems(),
        [
            "BOR_AUTH=off is refused on BOR_BIND=0.0.0.0:8000: without sign-in bor must listen on a loopback address (127.0.0.1 or ::1)"
        ]
    );
    assert!(config(&[("BOR_AUTH", "off"), ("BOR_BIND", "[::1]:8000")]).is_ok());
    assert!(
        config(&[("BOR_BIND", "0.0.0.0:8000")]).is_ok(),
        "accounts may listen anywhere"
    );
}

#[test]
fn the_public_url_is_an_http_url_without_credentials() {
    let public = accepted("BOR_PUBLIC_URL", "https://bor.example.com");
    assert_eq!(
        public.public_url.map(|url| url.to_string()),
        Some("https://bor.example.com/".to_owned())
    );
    for bad in [
        "bor.example.com",
        "ftp://bor.example.com",
        "https://u:p@bor.example.com",
        "https://bor.example.com/?x=1",
    ] {
        assert!(config(&[("BOR_PUBLIC_URL", bad)]).is_err(), "{bad}");
    }
}

#[test]
fn integers_accept_their_bounds_and_reject_beyond() {
    let cases: &[(&str, u64, u64)] = &[
        ("BOR_DB_POOL_SIZE", 1, 128),
        ("BOR_LLM_RETRIES", 0, 10),
        ("BOR_AGENT_MAX_ROUNDS", 1, 16),
        ("BOR_RETRIEVAL_TOP_K", 1, 50),
        ("BOR_MAX_MESSAGE_CHARS", 1, 1_000_000),
        ("BOR_MAX_CONCURRENT_TURNS", 1, 100_000),
        ("BOR_LOG_QUEUE_ROWS", 100, 1_000_000),
        ("BOR_TURN_REPLAY_SECONDS", 0, 86_400),
        ("BOR_AUDIT_DAYS", 1, 3_650),
    ];
    for &(name, low, high) in cases {
        accepted(name, &low.to_string());
        accepted(name, &high.to_string());
        let expected = format!("expected an integer from {low} to {high}");
        for bad in [
            (high + 1).to_string(),
            "-1".to_owned(),
            "2.5".to_owned(),
            "many".to_owned(),
        ] {
            let line = problem(name, &bad);
            assert!(line.starts_with(&format!("{name}=")), "{line}");
            assert!(line.contains(&format!("{bad:?}")), "{line}");
            assert!(line.ends_with(&expected), "{line}");
        }
        if low > 0 {
            problem(name, &(low - 1).to_string());
        }
    }
    let config = config(&[("BOR_DB_POOL_SIZE", "128"), ("BOR_LLM_RETRIES", "0")]).unwrap();
    assert_eq!((config.db_pool_size, config.llm_retries), (128, 0));
}

#[test]
fn durations_are_seconds_with_fractions() {
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        // name, lowest, highest, just below, just above
        ("BOR_LLM_RETRY_DELAY", "0", "60", "-0.001", "60.001"),
        ("BOR_LLM_CONNECT_TIMEOUT", "0.1", "300", "0.09", "300.5"),
        ("BOR_LLM_READ_TIMEOUT", "0.1", "3600", "0.05", "3600.1"),
        ("BOR_SSE_KEEPALIVE", "1", "60", "0.99", "61"),
        ("BOR_SHUTDOWN_GRACE", "0", "600", "-1", "600.01"),
    ];
    for &(name, lowest, highest, below, above) in cases {
        accepted(name, lowest);
        accepted(name, highest);
        for bad in [below, above, "ten", "NaN", "inf"] {
            let line = problem(name, bad);
            assert!(line.starts_with(name), "{line}");
            assert!(line.contains("(fractions allowed)"), "{line}");
        }
    }
    let config = config(&[
        ("BOR_LLM_RETRY_DELAY", "0.25"),
        ("BOR_LLM_CONNECT_TIMEOUT", "0.1"),
    ]);
    let config = config.unwrap();
    assert_eq!(config.llm_retry_delay, Duration::from_millis(250));
    assert_eq!(config.llm_connect_timeout, Duration::from_millis(100));
    assert_eq!(
        problem("BOR_LLM_RETRY_DELAY", "61"),
        r#"BOR_LLM_RETRY_DELAY="61" is invalid: expected seconds from 0 to 60 (fractions allowed)"#
    );
}

#[test]
fn deflect_threshold_is_a_number_from_minus_one_to_one() {
    assert_eq!(
        accepted("BOR_DEFLECT_THRESHOLD", "-1").deflect_threshold,
        -1.0
    );
    assert_eq!(
        accepted("BOR_DEFLECT_THRESHOLD", "1").deflect_threshold,
        1.0
    );
    assert_eq!(
        accepted("BOR_DEFLECT_THRESHOLD", "0.5").deflect_threshold,
        0.5
    );
    for bad in ["-1.01", "1.5", "high", "NaN"] {
        assert_eq!(
            problem("BOR_DEFLECT_THRESHOLD", bad),
            format!("BOR_DEFLECT_THRESHOLD={bad:?} is invalid: expected a number from -1 to 1")
        );
    }
}

#[test]
fn chunk_overlap_must_stay_under_half_a_chunk() {
    let none = config(&[("BOR_CHUNK_CHARS", "400"), ("BOR_CHUNK_OVERLAP", "0")]).unwrap();
    assert_eq!((none.chunk_chars, none.chunk_overlap), (400, 0));
    let most = config(&[("BOR_CHUNK_CHARS", "400"), ("BOR_CHUNK_OVERLAP", "199")]).unwrap();
    assert_eq!(most.chunk_overlap, 199);
    assert_eq!(accepted("BOR_CHUNK_CHARS", "20000").chunk_chars, 20_000);
    for bad in ["199", "20001", "many"] {
        assert_eq!(
            problem("BOR_CHUNK_CHARS", bad),
            format!("BOR_CHUNK_CHARS={bad:?} is invalid: expected an integer from 200 to 20000")
        );
    }
    let error = config(&[("BOR_CHUNK_CHARS", "400"), ("BOR_CHUNK_OVERLAP", "200")]).unwrap_err();
    assert_eq!(
        error.problems(),
        ["BOR_CHUNK_OVERLAP=200 is invalid: expected less than half of BOR_CHUNK_CHARS (400)"]
    );
    assert_eq!(
        problem("BOR_CHUNK_OVERLAP", "5001"),
        r#"BOR_CHUNK_OVERLAP="5001" is invalid: expected an integer from 0 to 5000"#
    );
}

#[test]
fn booleans_accept_the_usual_spellings() {
    for (value, expected) in [
        ("true", true),
        ("TRUE", true),
        ("1", true),
        ("yes", true),
        ("on", true),
        ("false", false),
        ("False", false),
        ("0", false),
        ("no", false),
        ("off", false),
    ] {
        assert_eq!(accepted("BOR_AGENT_ENABLED", value).agent_enabled, expected);
        let config = accepted("BOR_LLM_THINKING_FORCED_OPEN", value);
        assert_eq!(config.llm_thinking_forced_open, expected);
    }
    assert_eq!(
        problem("BOR_AGENT_ENABLED", "maybe"),
        r#"BOR_AGENT_ENABLED="maybe" is invalid: expected true or false"#
    );
}

#[test]
fn empty_or_blank_values_count_as_unset() {
    let defaults = config(&[]).unwrap();
    let blank = config(&[
        ("BOR_BIND", ""),
        ("BOR_DB_POOL_SIZE", "   "),
        ("BOR_AGENT_ENABLED", ""),
        ("BOR_LLM_RETRY_DELAY", ""),
        ("BOR_ADMIN_TOKEN", ""),
        ("BOR_LLM_API_KEY", " "),
        ("BOR_LLM_BASE_URL", ""),
    ])
    .unwrap();
    assert_eq!(blank, defaults);
}

#[test]
fn values_are_trimmed() {
    let config = config(&[
        ("BOR_DB_POOL_SIZE", " 16 "),
        ("BOR_ADMIN_TOKEN", " token\n"),
    ]);
    let config = config.unwrap();
    assert_eq!(config.db_pool_size, 16);
    assert_eq!(
        config.admin_token.as_ref().map(Secret::expose),
        Some("token")
    );
}

#[test]
fn bind_must_be_an_ip_address_and_port() {
    assert_eq!(
        accepted("BOR_BIND", "0.0.0.0:9000").bind,
        "0.0.0.0:9000".parse().unwrap()
    );
    assert_eq!(
        accepted("BOR_BIND", "[::1]:80").bind,
        "[::1]:80".parse().unwrap()
    );
    for bad in ["localhost:8000", "127.0.0.1", "127.0.0.1:99999"] {
        assert_eq!(
            problem("BOR_BIND", bad),
            format!(
                "BOR_BIND={bad:?} is invalid: expected an IP address and port such as 127.0.0.1:8000"
            )
        );
    }
}

#[test]
fn llm_base_url_must_be_http_and_loses_its_trailing_slash() {
    let config = accepted("BOR_LLM_BASE_URL", "https://models.example.org/v1/");
    assert_eq!(config.llm_base_url, "https://models.example.org/v1");
    let config = accepted("BOR_LLM_BASE_URL", "http://127.0.0.1:8080");
    assert_eq!(config.llm_base_url, "http://127.0.0.1:8080");
    for bad in [
        "ftp://127.0.0.1/v1",
        "127.0.0.1:8080/v1",
        "http://",
        "http://host/v1?key=1",
        "unix:/tmp/socket",
    ] {
        let line = problem("BOR_LLM_BASE_URL", bad);
        assert!(line.starts_with("BOR_LLM_BASE_URL is invalid"), "{line}");
        assert!(line.contains("http:// or https:// URL"), "{line}");
    }
}

#[test]
fn the_temperature_is_sent_only_when_set_and_within_0_to_2() {
    assert_eq!(
        accepted("BOR_LLM_TEMPERATURE", "0").llm_temperature,
        Some(0.0)
    );
    assert_eq!(
        accepted("BOR_LLM_TEMPERATURE", "0.7").llm_temperature,
        Some(0.7)
    );
    assert_eq!(
        problem("BOR_LLM_TEMPERATURE", "2.5"),
        r#"BOR_LLM_TEMPERATURE="2.5" is invalid: expected a number from 0 to 2"#
    );
}

#[test]
fn embeddings_go_to_their_own_server_when_one_is_named() {
    let config = config(&[
        ("BOR_LLM_BASE_URL", "http://127.0.0.1:18089/v1"),
        ("BOR_LLM_EMBED_BASE_URL", "http://127.0.0.1:18088/v1/"),
    ])
    .unwrap();
    assert_eq!(
        config.llm_embed_base_url.as_deref(),
        Some("http://127.0.0.1:18088/v1")
    );
    assert_eq!(config.llm_embed_url(), "http://127.0.0.1:18088/v1");
    assert_eq!(config.llm_base_url, "http://127.0.0.1:18089/v1");
    let unset = accepted("BOR_LLM_EMBED_BASE_URL", " ");
    assert_eq!(unset.llm_embed_url(), unset.llm_base_url);
    let line = problem("BOR_LLM_EMBED_BASE_URL", "127.0.0.1:18088");
    assert!(
        line.starts_with("BOR_LLM_EMBED_BASE_URL is invalid"),
        "{line}"
    );
}

#[test]
fn the_embeddings_fix_names_the_variable_that_sends_them_and_no_credentials() {
    let unset = config(&[("BOR_LLM_BASE_URL", "http://user:pw@127.0.0.1:18089/v1")]).unwrap();
    let fix = unset.embeddings_fix();
    assert!(fix.starts_with("BOR_LLM_EMBED_BASE_URL is unset, so embeddings go to BOR_LLM_BASE_URL=http://***@127.0.0.1:18089/v1"), "{fix}");
    assert!(!fix.contains("pw"), "{fix}");
    let set = config(&[("BOR_LLM_EMBED_BASE_URL", "http://127.0.0.1:18090/v1")]).unwrap();
    let fix = set.embeddings_fix();
    assert!(
        fix.starts_with("embeddings go to BOR_LLM_EMBED_BASE_URL=http://127.0.0.1:18090/v1;"),
        "{fix}"
    );
}

#[test]
fn database_url_must_be_a_postgres_url() {
    let url = "postgresql://bor:pw@db.internal:5433/bor";
    assert_eq!(accepted("BOR_DATABASE_URL", url).database_url, url);
    for bad in [
        "mysql://127.0.0.1/bor",
        "host=127.0.0.1 user=postgres",
        "postgres://",
    ] {
        let line = problem("BOR_DATABASE_URL", bad);
        assert!(line.starts_with("BOR_DATABASE_URL is invalid"), "{line}");
        assert!(
            line.contains("postgres://postgres@127.0.0.1:5432/bor"),
            "{line}"
        );
    }
}

#[test]
fn a_rejected_url_is_not_shown_at_all() {
    for (variable, bad, secret) in [
        (
            "BOR_DATABASE_URL",
            "mysql://admin:hunter2@127.0.0.1/bor",
            "hunter2",
        ),
        // A `/` in the password or a missing `//` defeat any redaction of the text.
        (
            "BOR_DATABASE_URL",
            "postgres://bor:pa/ss@127.0.0.1/bor",
            "pa/ss",
        ),
        (
            "BOR_DATABASE_URL",
            "postgres:bor:hunter2@127.0.0.1/bor",
            "hunter2",
        ),
        (
            "BOR_LLM_BASE_URL",
            "http://127.0.0.1:1/v1?api_key=sk-live-1",
            "sk-live-1",
        ),
        (
            "BOR_LLM_EMBED_BASE_URL",
            "http//user:sk-2@127.0.0.1/v1",
            "sk-2",
        ),
    ] {
        let line = problem(variable, bad);
        assert!(!line.contains(secret), "{line}");
        assert!(
            line.starts_with(&format!("{variable} is invalid: expected")),
            "{line}"
        );
    }
}

#[test]
fn log_must_be_a_tracing_filter() {
    assert_eq!(accepted("BOR_LOG", "bor=debug,warn").log, "bor=debug,warn");
    let line = problem("BOR_LOG", "bor=loud");
    assert!(line.starts_with(r#"BOR_LOG="bor=loud" is invalid: expected a tracing filter"#));
}

#[test]
fn log_format_is_text_or_json() {
    assert_eq!(config(&[]).unwrap().log_format, LogFormat::Text);
    assert_eq!(
        accepted("BOR_LOG_FORMAT", "JSON").log_format,
        LogFormat::Json
    );
    assert_eq!(
        accepted("BOR_LOG_FORMAT", "text").log_format,
        LogFormat::Text
    );
    let line = problem("BOR_LOG_FORMAT", "yaml");
    assert_eq!(
        line,
        r#"BOR_LOG_FORMAT="yaml" is invalid: expected text or json"#
    );
}

#[test]
fn llm_urls_are_shown_without_credentials() {
    for (url, shown) in [
        (
            "https://sk-token@models.example.org/v1",
            "https://***@models.example.org/v1",
        ),
        (
            "http://user:secret@127.0.0.1:8080/v1",
            "http://***@127.0.0.1:8080/v1",
        ),
        ("http://127.0.0.1:18089/v1", "http://127.0.0.1:18089/v1"),
    ] {
        assert_eq!(redact_url_credentials(url), shown, "{url}");
    }
}

#[test]
fn every_bad_variable_is_reported_together_one_per_line() {
    let error = config(&[
        ("BOR_BIND", "nowhere"),
        ("BOR_DB_POOL_SIZE", "0"),
        ("BOR_LLM_RETRIES", "11"),
        ("BOR_AGENT_ENABLED", "perhaps"),
        ("BOR_SSE_KEEPALIVE", "0.5"),
        ("BOR_RETRIEVAL_TOP_K", "7"),
    ])
    .unwrap_err();
    let names: Vec<&str> = error
        .problems()
        .iter()
        .map(|line| line.split('=').next().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "BOR_BIND",
            "BOR_DB_POOL_SIZE",
            "BOR_LLM_RETRIES",
            "BOR_AGENT_ENABLED",
            "BOR_SSE_KEEPALIVE"
        ]
    );
    let shown = error.to_string();
    assert_eq!(shown.lines().count(), 5, "{shown}");
    assert!(
        shown.contains(r#"BOR_DB_POOL_SIZE="0" is invalid: expected an integer from 1 to 128"#)
    );
}

#[test]
fn variables_without_the_prefix_are_ignored() {
    assert_eq!(
        config(&[("DB_POOL_SIZE", "0"), ("LOG", "x=y=z")]).unwrap(),
        config(&[]).unwrap()
    );
}

#[test]
fn secrets_stay_out_of_debug_output() {
    let config = config(&[
        ("BOR_LLM_API_KEY", "sk-very-secret-key"),
        ("BOR_ADMIN_TOKEN", "admin-token-value"),
        (
            "BOR_DATABASE_URL",
            "postgres://bor:db-password@127.0.0.1:5432/bor",
        ),
    ])
    .unwrap();
    let shown = format!("{config:?} {config:#?}");
    for secret in ["sk-very-secret-key", "admin-token-value", "db-password"] {
        assert!(!shown.contains(secret), "{secret} shown in {shown}");
    }
    assert!(
        shown.contains("postgres://bor:***@127.0.0.1:5432/bor"),
        "{shown}"
    );
    assert_eq!(
        config.llm_api_key.as_ref().map(Secret::expose),
        Some("sk-very-secret-key")
    );
    assert_eq!(
        config.admin_token.as_ref().map(Secret::expose),
        Some("admin-token-value")
    );
    assert_eq!(
        config.database_url,
        "postgres://bor:db-password@127.0.0.1:5432/bor"
    );
    assert_eq!(
        config.database_url_redacted(),
        "postgres://bor:***@127.0.0.1:5432/bor"
    );
}

#[test]
fn passwords_are_redacted_from_urls() {
    for (url, redacted) in [
        ("postgres://u:p@h:1/d", "postgres://u:***@h:1/d"),
        (
            "postgres://u:p%40ss@h/d?sslmode=disable",
            "postgres://u:***@h/d?sslmode=disable",
        ),
        (
            "postgres://u@h/d?password=p&x=1",
            "postgres://u@h/d?password=***&x=1",
        ),
        ("postgres://u:p:q@h@i/d", "postgres://u:***@i/d"),
        ("postgres://h/d", "postgres://h/d"),
        ("not a url", "not a url"),
    ] {
        assert_eq!(redact_url_password(url), redacted, "{url}");
    }
}

/// `.env.example` documents every variable, and the defaults it shows are the real ones.
#[test]
fn env_example_lists_every_variable_with_its_default() {
    let example = include_str!("../../.env.example");
    let documented: Vec<(String, String)> = example
        .lines()
        .filter_map(|line| line.strip_prefix("# BOR_"))
        .filter_map(|rest| rest.split_once('='))
        .map(|(name, value)| (format!("BOR_{name}"), value.trim().to_owned()))
        .collect();
    let mut names: Vec<String> = documented
        .iter()
        .map(|(name, _)| name.trim_start_matches("BOR_").to_lowercase())
        .collect();
    names.sort();
    let mut fields: Vec<String> = FIELDS.iter().map(|field| (*field).to_owned()).collect();
    fields.sort();
    assert_eq!(names, fields);
    let from_example = Config::from_vars(documented).unwrap();
    assert_eq!(from_example, config(&[]).unwrap());
}

/// A `.env` file in the temporary folder, removed on drop.
struct DotenvFile(std::path::PathBuf);

impl DotenvFile {
    fn new(contents: &str) -> DotenvFile {
        let path = std::env::temp_dir().join(format!("bor-config-{}.env", uuid::Uuid::new_v4()));
        std::fs::write(&path, contents).unwrap();
        DotenvFile(path)
    }
}

impl Drop for DotenvFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn environment(vars: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    vars.iter()
        .map(|(name, value)| (OsString::from(name), OsString::from(value)))
        .collect()
}

#[test]
fn the_environment_wins_over_dotenv_unless_empty() {
    let dotenv = DotenvFile::new(
        "# comment\nBOR_DB_POOL_SIZE=16\nBOR_LLM_RETRIES=2\nexport BOR_LOG=\"bor=debug\"\nBOR_AGENT_ENABLED=\n",
    );
    let env = environment(&[
        ("BOR_LLM_RETRIES", "5"),
        ("BOR_DB_POOL_SIZE", ""),
        ("PATH", "/usr/bin"),
    ]);
    let config = Config::from_sources(&dotenv.0, env).unwrap().config;
    assert_eq!(config.db_pool_size, 16);
    assert_eq!(config.llm_retries, 5);
    assert_eq!(config.log, "bor=debug");
    assert!(config.agent_enabled);
}

#[test]
fn a_missing_dotenv_is_no_problem() {
    let missing = std::env::temp_dir().join(format!("bor-missing-{}.env", uuid::Uuid::new_v4()));
    let config = Config::from_sources(&missing, environment(&[("BOR_LLM_RETRIES", "7")]));
    assert_eq!(config.unwrap().config.llm_retries, 7);
}

#[test]
fn dotenv_and_environment_problems_are_reported_together() {
    let dotenv = DotenvFile::new("BOR_DB_POOL_SIZE=0\nthis line is not an assignment\n");
    let mut env = environment(&[("BOR_LLM_RETRIES", "99")]);
    {
        use std::os::unix::ffi::OsStringExt;
        env.push((
            OsString::from("BOR_LOG"),
            OsString::from_vec(vec![0x66, 0xff]),
        ));
    }
    let error = Config::from_sources(&dotenv.0, env).unwrap_err();
    let lines = error.problems();
    assert_eq!(lines.len(), 4, "{error}");
    assert!(
        lines.iter().any(|line| line.starts_with(".env: ")),
        "{error}"
    );
    assert!(
        lines.contains(&"BOR_LOG is not valid UTF-8".to_owned()),
        "{error}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("BOR_DB_POOL_SIZE=\"0\"")),
        "{error}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("BOR_LLM_RETRIES=\"99\"")),
        "{error}"
    );
}

/// The operators' view of the configuration holds no secret.
#[test]
fn secrets_are_left_out_of_the_view() {
    let config = Config::from_vars([
        (
            "BOR_DATABASE_URL".to_owned(),
            "postgres://bor:db-secret-1@127.0.0.1:5432/bor".to_owned(),
        ),
        (
            "BOR_LLM_BASE_URL".to_owned(),
            "https://user:url-secret-2@models.example.org/v1".to_owned(),
        ),
        ("BOR_LLM_API_KEY".to_owned(), "sk-secret-3".to_owned()),
        ("BOR_ADMIN_TOKEN".to_owned(), "admin-secret-4".to_owned()),
        (
            "BOR_LLM_EMBED_BASE_URL".to_owned(),
            "https://user:url-secret-5@embed.example.org/v1".to_owned(),
        ),
    ])
    .unwrap();
    let view = ConfigView::from(&config);
    let shown = serde_json::to_string(&view).unwrap();
    for secret in [
        "db-secret-1",
        "url-secret-2",
        "sk-secret-3",
        "admin-secret-4",
        "url-secret-5",
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert_eq!(view.database_url, "postgres://bor:***@127.0.0.1:5432/bor");
    assert_eq!(view.llm_base_url, "https://***@models.example.org/v1");
    assert_eq!(
        view.llm_embed_base_url.as_deref(),
        Some("https://***@embed.example.org/v1")
    );
    assert_eq!(view.llm_api_key, SecretState::Set);
    assert_eq!(view.admin_token, SecretState::Set);
    assert_eq!(view.deflect_threshold, 0.35);
    let variables = view.variables();
    assert!(
        variables.contains(&("BOR_LLM_RETRIES".to_owned(), "3".to_owned())),
        "{variables:?}"
    );
    assert!(variables.contains(&("BOR_LOG_FORMAT".to_owned(), "text".to_owned())));
    assert!(variables.contains(&("BOR_LLM_API_KEY".to_owned(), "set".to_owned())));
}

#[test]
fn a_misspelt_variable_is_named_with_the_one_it_resembles() {
    let dotenv = DotenvFile::new("BOR_LLM_BASEURL=http://127.0.0.1:9/v1\nBOR_RETRIES=2\n");
    let env = environment(&[
        ("BOR_LLM_RETRYS", "5"),
        ("BOR_SOMETHING_ELSE", "1"),
        ("BOR_LLM_RETRIES", "4"),
        ("BOR_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1/x"),
        ("BOR_LLM_SERVER_HOME", "/opt/models"),
        ("PATH", "/usr/bin"),
    ]);
    let loaded = Config::from_sources(&dotenv.0, env).unwrap();
    assert_eq!(
        loaded.warnings,
        [
            "BOR_LLM_BASEURL is not a bor variable and is ignored; did you mean BOR_LLM_BASE_URL?",
            "BOR_RETRIES is not a bor variable and is ignored; did you mean BOR_LLM_RETRIES?",
            "BOR_LLM_RETRYS is not a bor variable and is ignored; did you mean BOR_LLM_RETRIES?",
            "BOR_SOMETHING_ELSE is not a bor variable and is ignored",
        ]
    );
    // The misspelt name changed nothing; the known ones were read.
    assert_eq!(loaded.config.llm_base_url, "http://127.0.0.1:18089/v1");
    assert_eq!(loaded.config.llm_retries, 4);
}

#[test]
fn known_variables_raise_no_warning() {
    let env: Vec<(OsString, OsString)> = FIELDS
        .iter()
        .map(|field| (OsString::from(variable_name(field)), OsString::new()))
        .collect();
    let missing = std::env::temp_dir().join(format!("bor-missing-{}.env", uuid::Uuid::new_v4()));
    assert_eq!(
        Config::from_sources(&missing, env).unwrap().warnings,
        Vec::<String>::new()
    );
}

#[test]
fn a_misspelt_name_is_named_with_the_problems_it_may_explain() {
    let missing = std::env::temp_dir().join(format!("bor-missing-{}.env", uuid::Uuid::new_v4()));
    let env = environment(&[("BOR_DB_POOL_SIZE", "0"), ("BOR_CATALOG_DIR", "/srv")]);
    let error = Config::from_sources(&missing, env).unwrap_err();
    assert_eq!(
        error.problems(),
        [
            r#"BOR_DB_POOL_SIZE="0" is invalid: expected an integer from 1 to 128"#,
            "BOR_CATALOG_DIR is not a bor variable and is ignored",
        ],
        "a three-letter variable (BOR_LOG) is no match for a longer name holding it"
    );
}

/// A file in the temporary folder holding `contents`, removed on drop.
fn secret_file(contents: &str) -> DotenvFile {
    DotenvFile::new(contents)
}

#[test]
fn secrets_and_the_database_url_are_read_from_files_without_the_trailing_newline() {
    let token = secret_file("token-from-file\n");
    let key = secret_file("key-from-file\r\n");
    let oidc = secret_file("oidc-secret");
    let database = secret_file("postgres://bor:pa55@db.example:5432/bor\n");
    let rerank = secret_file("rerank-key\n");
    let ocr = secret_file("ocr-key\n");
    let path = |file: &DotenvFile| file.0.display().to_string();
    let config = config(&[
        ("BOR_ADMIN_TOKEN_FILE", &path(&token)),
        ("BOR_LLM_API_KEY_FILE", &path(&key)),
        ("BOR_OIDC_ISSUER", "https://id.example"),
        ("BOR_OIDC_CLIENT_ID", "bor"),
        ("BOR_OIDC_CLIENT_SECRET_FILE", &path(&oidc)),
        ("BOR_DATABASE_URL_FILE", &path(&database)),
        ("BOR_RERANK_API_KEY_FILE", &path(&rerank)),
        ("BOR_OCR_API_KEY_FILE", &path(&ocr)),
    ])
    .unwrap();
    assert_eq!(config.admin_token, Some(Secret::new("token-from-file")));
    assert_eq!(config.llm_api_key, Some(Secret::new("key-from-file")));
    assert_eq!(config.oidc_client_secret, Some(Secret::new("oidc-secret")));
    assert_eq!(
        config.database_url,
        "postgres://bor:pa55@db.example:5432/bor"
    );
    assert_eq!(config.rerank_api_key, Some(Secret::new("rerank-key")));
    assert_eq!(config.ocr_api_key, Some(Secret::new("ocr-key")));
}

#[test]
fn a_secret_file_that_cannot_be_read_stops_start_up_with_one_line_naming_it() {
    let missing = std::env::temp_dir().join(format!("bor-missing-{}", uuid::Uuid::new_v4()));
    let missing = missing.display().to_string();
    let error = config(&[("BOR_ADMIN_TOKEN_FILE", &missing)]).unwrap_err();
    assert_eq!(error.problems().len(), 1, "{error}");
    let line = &error.problems()[0];
    assert!(
        line.starts_with(&format!("BOR_ADMIN_TOKEN_FILE={missing} cannot be read: ")),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");

    let empty = secret_file("\n");
    assert_eq!(
        problem("BOR_LLM_API_KEY_FILE", &empty.0.display().to_string()),
        format!("BOR_LLM_API_KEY_FILE={} is empty", empty.0.display())
    );
}

#[test]
fn a_variable_and_its_file_both_set_are_refused() {
    let token = secret_file("from-file\n");
    let error = config(&[
        ("BOR_ADMIN_TOKEN", "from-the-environment"),
        ("BOR_ADMIN_TOKEN_FILE", &token.0.display().to_string()),
    ])
    .unwrap_err();
    assert_eq!(
        error.problems(),
        ["BOR_ADMIN_TOKEN and BOR_ADMIN_TOKEN_FILE are both set: keep one (the file for a secret)"]
    );
}

#[test]
fn only_the_secrets_and_the_database_url_have_a_file_variable() {
    let missing = std::env::temp_dir().join(format!("bor-missing-{}.env", uuid::Uuid::new_v4()));
    let file = secret_file("x\n");
    let env = environment(&[
        ("BOR_OIDC_CLIENT_SECRET_FILE", &file.0.display().to_string()),
        ("BOR_LOG_FILE", "/var/log/bor.log"),
    ]);
    assert_eq!(
        Config::from_sources(&missing, env).unwrap().warnings,
        ["BOR_LOG_FILE is not a bor variable and is ignored"]
    );
}

/// Nothing bor ships holds a secret: every secret, and the admin API with it, is off
/// until an operator sets one.
#[test]
fn no_secret_has_a_default() {
    let config = config(&[]).unwrap();
    assert_eq!(config.admin_token, None);
    assert_eq!(config.llm_api_key, None);
    assert_eq!(config.ocr_api_key, None);
    assert_eq!(config.rerank_api_key, None);
    assert_eq!(config.oidc_client_secret, None);
    let database = url::Url::parse(&config.database_url).unwrap();
    assert_eq!(database.password(), None);
}
