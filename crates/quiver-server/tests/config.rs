//! Configuration: precedence, validation messages, unknown keys, round trip.

use std::path::PathBuf;
use std::time::Duration;

use quiver_server::config::{ConfigError, Inputs, Loaded, Profile, Source};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn write_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("quiver.toml");
    std::fs::write(&path, text).expect("write config file");
    path
}

fn load(inputs: &Inputs) -> Loaded {
    Loaded::load(inputs).unwrap_or_else(|error| panic!("config should load: {error}"))
}

fn error(inputs: &Inputs) -> String {
    Loaded::load(inputs)
        .expect_err("config should be refused")
        .to_string()
}

fn source_of(loaded: &Loaded, key: &str) -> Source {
    loaded
        .values
        .iter()
        .find(|(k, _, _)| k.name == key)
        .map(|(_, _, source)| source.clone())
        .expect("key is listed")
}

#[test]
fn defaults_apply_without_any_source() {
    let loaded = load(&Inputs::default());
    let config = &loaded.config;
    assert_eq!(config.profile, Profile::Balanced);
    assert_eq!(config.http.listener.addr.to_string(), "127.0.0.1:8080");
    assert_eq!(config.http.listener.max_connections.get(), 1024);
    assert_eq!(config.data_dir, PathBuf::from("./quiver-data"));
    assert_eq!(config.shutdown.drain_timeout, Duration::from_secs(10));
    assert_eq!(config.net.send_buffer_bytes, None);
    assert_eq!(source_of(&loaded, "http.addr"), Source::Default);
}

#[test]
fn precedence_is_default_profile_file_env_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_file(
        &dir,
        "profile = \"low-memory\"\n[net]\nsend_buffer = \"1MiB\"\nrecv_buffer = \"2MiB\"\nbacklog = 77\n[http]\nmax_connections = 10\n",
    );
    let inputs = Inputs {
        config_file: Some(file.clone()),
        env: env(&[
            ("QUIVER_NET_RECV_BUFFER", "3MiB"),
            ("QUIVER_NET_BACKLOG", "88"),
        ]),
        flags: vec![("net.backlog", "99".to_owned())],
    };
    let loaded = load(&inputs);
    let config = &loaded.config;
    // default only
    assert_eq!(config.shutdown.drain_timeout, Duration::from_secs(10));
    // file picks the profile; the profile sets the keep-alive-free default for keys not set elsewhere
    assert_eq!(config.profile, Profile::LowMemory);
    // file beats profile
    assert_eq!(config.http.listener.max_connections.get(), 10);
    assert_eq!(config.net.send_buffer_bytes, Some(1 << 20));
    assert_eq!(
        source_of(&loaded, "net.send_buffer"),
        Source::File(file.clone())
    );
    // env beats file
    assert_eq!(config.net.recv_buffer_bytes, Some(3 << 20));
    assert_eq!(
        source_of(&loaded, "net.recv_buffer"),
        Source::Env("QUIVER_NET_RECV_BUFFER".into())
    );
    // flag beats env and file
    assert_eq!(config.net.backlog, 99);
    assert_eq!(
        source_of(&loaded, "net.backlog"),
        Source::Flag("net-backlog".into())
    );
}

#[test]
fn profile_values_apply_below_the_file() {
    let inputs = Inputs {
        flags: vec![("profile", "throughput".to_owned())],
        ..Inputs::default()
    };
    let loaded = load(&inputs);
    assert_eq!(loaded.config.net.send_buffer_bytes, Some(4 << 20));
    assert_eq!(loaded.config.http.listener.max_connections.get(), 4096);
    assert_eq!(
        source_of(&loaded, "net.send_buffer"),
        Source::Profile(Profile::Throughput)
    );
    // a key the profile does not touch stays at its default
    assert_eq!(source_of(&loaded, "http.addr"), Source::Default);

    let env_profile = Inputs {
        env: env(&[("QUIVER_PROFILE", "latency")]),
        ..Inputs::default()
    };
    assert_eq!(
        load(&env_profile).config.net.send_buffer_bytes,
        Some(256 << 10)
    );
}

#[test]
fn resp_io_threads_is_auto_or_a_count_in_every_source() {
    assert_eq!(load(&Inputs::default()).config.resp.io_threads, None);
    let dir = tempfile::tempdir().expect("temp dir");
    for (text, expected) in [("io_threads = 3", Some(3)), ("io_threads = \"auto\"", None)] {
        let file = write_file(&dir, &format!("[resp]\n{text}\n"));
        let from_file = Inputs {
            config_file: Some(file),
            ..Inputs::default()
        };
        assert_eq!(load(&from_file).config.resp.io_threads, expected, "{text}");
    }
    let from_env = Inputs {
        env: env(&[("QUIVER_RESP_IO_THREADS", "2")]),
        ..Inputs::default()
    };
    assert_eq!(load(&from_env).config.resp.io_threads, Some(2));
}

#[test]
fn config_file_can_come_from_the_environment() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_file(&dir, "[http]\naddr = \"127.0.0.1:9999\"\n");
    let from_env = Inputs {
        env: env(&[("QUIVER_CONFIG", file.to_str().expect("utf-8 path"))]),
        ..Inputs::default()
    };
    assert_eq!(load(&from_env).config.http.listener.addr.port(), 9999);
    // Set but empty is no file.
    let empty = Inputs {
        env: env(&[("QUIVER_CONFIG", "")]),
        ..Inputs::default()
    };
    assert_eq!(load(&empty).config.http.listener.addr.port(), 8080);
}

#[test]
fn every_kind_of_bad_value_names_key_source_value_and_what_is_allowed() {
    let cases: &[(&str, &str, &str)] = &[
        ("http.addr", "localhost:80", "a socket address"),
        (
            "http.max_connections",
            "0",
            "a whole number from 1 to 1000000",
        ),
        (
            "http.max_connections",
            "many",
            "a whole number from 1 to 1000000",
        ),
        ("net.send_buffer", "12 parsecs", "a size"),
        ("net.send_buffer", "1GiB", "at most 256MiB"),
        ("shutdown.drain_timeout", "10", "a duration"),
        ("shutdown.drain_timeout", "2h", "at most 1h"),
        ("net.nodelay", "perhaps", "true or false"),
        ("log.format", "xml", "one of pretty, json"),
        ("log.level", "info,,=bogus[", "a level"),
        (
            "profile",
            "fastest",
            "one of balanced, latency, throughput, low-memory",
        ),
        ("data_dir", "", "a non-empty path"),
        (
            "resp.io_threads",
            "0",
            "auto, or a whole number from 1 to 256",
        ),
        (
            "resp.io_threads",
            "all",
            "auto, or a whole number from 1 to 256",
        ),
    ];
    for (key, value, allowed) in cases {
        let inputs = Inputs {
            flags: vec![(key, (*value).to_owned())],
            ..Inputs::default()
        };
        let message = error(&inputs);
        let flag = key.replace(['.', '_'], "-");
        assert!(message.contains(&format!("`{key}`")), "{message}");
        assert!(message.contains(&format!("flag --{flag}")), "{message}");
        assert!(message.contains(&format!("{value:?}")), "{message}");
        assert!(message.contains(allowed), "{key}={value}: {message}");
    }
}

#[test]
fn bad_env_value_names_the_variable() {
    let inputs = Inputs {
        env: env(&[("QUIVER_HTTP_ADDR", "nowhere")]),
        ..Inputs::default()
    };
    let message = error(&inputs);
    assert!(message.contains("env QUIVER_HTTP_ADDR"), "{message}");
    assert!(message.contains("\"nowhere\""), "{message}");
}

#[test]
fn a_quic_key_without_its_certificate_is_refused_even_with_quic_off() {
    let inputs = Inputs {
        env: env(&[
            ("QUIVER_QUIC_ENABLED", "false"),
            ("QUIVER_QUIC_KEY", "/etc/quiver/key.pem"),
        ]),
        ..Inputs::default()
    };
    let message = error(&inputs);
    assert!(
        message.contains("`quic.key`")
            && message.contains("env QUIVER_QUIC_KEY")
            && message.contains("quic.cert set too"),
        "{message}"
    );
}

#[test]
fn values_serve_would_refuse_are_refused_when_loaded() {
    for (var, value, says) in [
        ("QUIVER_CACHE_SAVE", "3600", "pairs of seconds and changes"),
        (
            "QUIVER_RESP_REDIS_CONFIG",
            "appendonly yes",
            "cache.appendonly",
        ),
    ] {
        let inputs = Inputs {
            env: env(&[(var, value)]),
            ..Inputs::default()
        };
        let message = error(&inputs);
        assert!(message.contains(says), "{var}: {message}");
    }
}

#[test]
fn bad_file_value_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_file(&dir, "[net]\nkeepalive = 1.5\n");
    let message = error(&Inputs {
        config_file: Some(file.clone()),
        ..Inputs::default()
    });
    assert!(message.contains("`net.keepalive`"), "{message}");
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(message.contains("1.5"), "{message}");
}

#[test]
fn unknown_file_key_suggests_the_nearest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_file(&dir, "[http]\nadr = \"127.0.0.1:1\"\n");
    let inputs = Inputs {
        config_file: Some(file),
        ..Inputs::default()
    };
    match Loaded::load(&inputs) {
        Err(ConfigError::UnknownKey {
            key, suggestion, ..
        }) => {
            assert_eq!(key, "http.adr");
            assert_eq!(suggestion.as_deref(), Some("http.addr"));
        }
        other => panic!("expected an unknown key error, got {other:?}"),
    }
    assert!(error(&inputs).contains("did you mean `http.addr`?"));
}

#[test]
fn unknown_env_var_suggests_the_nearest() {
    let inputs = Inputs {
        env: env(&[("QUIVER_DATA_DIRR", "/tmp/x")]),
        ..Inputs::default()
    };
    let message = error(&inputs);
    assert!(message.contains("QUIVER_DATA_DIRR"), "{message}");
    assert!(
        message.contains("did you mean `QUIVER_DATA_DIR`?"),
        "{message}"
    );
    // variables of other programs are not ours to judge
    let inputs = Inputs {
        env: env(&[("HOME", "/root"), ("RUST_LOG", "debug")]),
        ..Inputs::default()
    };
    load(&inputs);
}

#[test]
fn unreadable_or_invalid_files_are_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.toml");
    let message = error(&Inputs {
        config_file: Some(missing.clone()),
        ..Inputs::default()
    });
    assert!(
        message.contains("cannot read config file") && message.contains("missing.toml"),
        "{message}"
    );

    let broken = write_file(&dir, "# settings\n[http]\naddr = \n");
    let message = error(&Inputs {
        config_file: Some(broken),
        ..Inputs::default()
    });
    assert!(
        message.contains("is not valid TOML") && message.contains("line 3, column"),
        "{message}"
    );
}

#[test]
fn printed_config_round_trips_as_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs = Inputs {
        env: env(&[
            ("QUIVER_NET_KEEPALIVE", "90s"),
            ("QUIVER_LOG_LEVEL", "quiver=debug,warn"),
            (
                "QUIVER_RESP_REDIS_CONFIG",
                "hz 20; HASH-MAX-ZIPLIST-ENTRIES 64; save",
            ),
        ]),
        flags: vec![
            ("profile", "latency".to_owned()),
            ("http.addr", "[::1]:0".to_owned()),
        ],
        ..Inputs::default()
    };
    let first = load(&inputs);
    let printed = first.to_toml();
    assert!(printed.contains("# flag --http-addr"), "{printed}");
    assert!(printed.contains("# env QUIVER_NET_KEEPALIVE"), "{printed}");
    assert!(printed.contains("# profile latency"), "{printed}");
    let file = write_file(&dir, &printed);
    let second = load(&Inputs {
        config_file: Some(file),
        ..Inputs::default()
    });
    let redis_config = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        first.config.resp.redis_config,
        redis_config(&[
            ("hz", "20"),
            ("hash-max-ziplist-entries", "64"),
            ("save", "")
        ])
    );
    let mut second_config = second.config.clone();
    assert_eq!(
        second_config.config_file.take(),
        Some(dir.path().join("quiver.toml"))
    );
    assert_eq!(first.config, second_config);
    assert_eq!(second.to_toml().lines().count(), printed.lines().count());
}
