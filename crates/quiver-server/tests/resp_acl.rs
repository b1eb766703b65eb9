//! Users through real connections: an ACL file loaded at start-up, written by ACL SAVE
//! and read back after a restart, refused whole when a line is wrong; a deleted user's
//! connections closed; subscribers whose channels are taken away closed; `requirepass` as
//! the default user's password.

use crate::support::{Server, Started, redis_connection};

fn query<T: redis::FromRedisValue>(
    con: &mut redis::Connection,
    words: &[&str],
) -> redis::RedisResult<T> {
    let mut command = redis::cmd(words[0]);
    for word in &words[1..] {
        command.arg(*word);
    }
    command.query(con)
}

#[test]
fn users_come_from_the_acl_file_and_acl_save_writes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("users.acl");
    std::fs::write(
        &file,
        "# the application\nuser alice on >secret ~app:* resetchannels -@all +set +get +acl|whoami\nuser default on nopass ~* &* +@all\n",
    )
    .unwrap();
    let setting = format!("aclfile {}", file.display());
    let args = ["--resp-redis-config", setting.as_str()];
    let server = Server::start(&dir.path().join("data"), &args);
    let mut alice = redis_connection(&server);
    let _: () = query(&mut alice, &["AUTH", "alice", "secret"]).unwrap();
    let me: String = query(&mut alice, &["ACL", "WHOAMI"]).unwrap();
    assert_eq!(me, "alice");
    let _: () = query(&mut alice, &["SET", "app:1", "v"]).unwrap();
    let refused = query::<()>(&mut alice, &["SET", "other", "v"]).unwrap_err();
    assert_eq!(refused.code(), Some("NOPERM"), "{refused}");
    let refused = query::<()>(&mut alice, &["DEL", "app:1"]).unwrap_err();
    assert!(refused.to_string().contains("'del' command"), "{refused}");

    let mut admin = redis_connection(&server);
    let _: () = query(
        &mut admin,
        &["ACL", "SETUSER", "bob", "on", ">pw", "~*", "+get"],
    )
    .unwrap();
    let _: () = query(&mut admin, &["ACL", "SAVE"]).unwrap();
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(
        saved.lines().any(|l| l.starts_with("user bob on #")),
        "{saved}"
    );
    // The log names who was refused what.
    let log: Vec<redis::Value> = query(&mut admin, &["ACL", "LOG"]).unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    // Each entry's client, as CLIENT LIST shows it, names the refused command.
    let logged = format!("{log:?}");
    for command in ["cmd=del", "cmd=set"] {
        assert!(logged.contains(command), "{command} in {logged}");
    }
    // Deleting alice closes her connection.
    let removed: i64 = query(&mut admin, &["ACL", "DELUSER", "alice"]).unwrap();
    assert_eq!(removed, 1);
    assert!(query::<String>(&mut alice, &["ACL", "WHOAMI"]).is_err());
    let _: () = query(&mut admin, &["ACL", "SAVE"]).unwrap();
    drop(server);

    // After a restart the file holds bob (and no longer alice).
    let server = Server::start(&dir.path().join("data"), &args);
    let mut bob = redis_connection(&server);
    let _: () = query(&mut bob, &["AUTH", "bob", "pw"]).unwrap();
    let wrong = query::<()>(&mut bob, &["AUTH", "alice", "secret"]).unwrap_err();
    assert_eq!(wrong.code(), Some("WRONGPASS"), "{wrong}");
    drop(server);

    // A wrong line refuses the start, and says where.
    std::fs::write(&file, "user carol on\nuser dave +nosuch\n").unwrap();
    match Server::try_start(&dir.path().join("data"), &args) {
        Started::Exited { stderr, .. } => {
            assert!(stderr.contains("line 2"), "{stderr}");
            assert!(stderr.contains("Unknown command"), "{stderr}");
        }
        Started::Running(_) => panic!("a wrong ACL file was loaded"),
    }
}

/// A failed login is logged under the command's name as sent, and in the `multi` context
/// when EXEC runs it, as Redis logs it.
#[test]
fn failed_logins_are_logged_by_command_and_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut con = redis_connection(&server);
    let _ = query::<()>(&mut con, &["AUTH", "nobody", "pw"]);
    let _ = query::<()>(&mut con, &["hello", "2", "AUTH", "nobody", "pw"]);
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("AUTH").arg("nobody").arg("pw");
    let _ = pipe.query::<redis::Value>(&mut con);
    let log: Vec<Vec<redis::Value>> = query(&mut con, &["ACL", "LOG"]).unwrap();
    let field = |entry: &[redis::Value], name: &str| -> String {
        let at = entry
            .iter()
            .position(|v| matches!(v, redis::Value::BulkString(b) if b == name.as_bytes()))
            .unwrap_or_else(|| panic!("{name} in {entry:?}"));
        redis::from_redis_value(entry[at + 1].clone()).unwrap()
    };
    // Newest first: the AUTH in EXEC (counted apart from the first AUTH, whose context
    // differs), HELLO, AUTH.
    let seen: Vec<(String, String, String)> = log
        .iter()
        .map(|e| (field(e, "object"), field(e, "context"), field(e, "count")))
        .collect();
    let expected = [
        ("AUTH", "multi", "1"),
        ("hello", "toplevel", "1"),
        ("AUTH", "toplevel", "1"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(o, c, n)| (o.to_string(), c.to_string(), n.to_string()))
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn requirepass_is_the_default_users_password() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--resp-requirepass", "hunter2"]);
    let mut con = redis_connection(&server);
    let refused = query::<()>(&mut con, &["GET", "k"]).unwrap_err();
    assert_eq!(refused.code(), Some("NOAUTH"), "{refused}");
    let _: () = query(&mut con, &["AUTH", "default", "hunter2"]).unwrap();
    let list: Vec<String> = query(&mut con, &["ACL", "LIST"]).unwrap();
    let hash = {
        let digest = ring::digest::digest(&ring::digest::SHA256, b"hunter2");
        digest
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(list, vec![format!("user default on #{hash} ~* &* +@all")]);
    // CONFIG SET requirepass replaces the password; an empty one opens the server.
    let _: () = query(&mut con, &["CONFIG", "SET", "requirepass", ""]).unwrap();
    let mut fresh = redis_connection(&server);
    let _: Option<String> = query(&mut fresh, &["GET", "k"]).unwrap();
    let line: String = query(&mut fresh, &["CLIENT", "INFO"]).unwrap();
    assert!(line.contains(" user=default "), "{line}");
}

/// A raw connection logged in as `user` that sent `command` and read its first reply.
fn subscribed(server: &Server, user: &str, command: &str, name: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server.resp).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "*3\r\n$4\r\nAUTH\r\n${}\r\n{user}\r\n$2\r\npw\r\n*2\r\n${}\r\n{command}\r\n${}\r\n{name}\r\n",
        user.len(),
        command.len(),
        name.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    // +OK, then the confirmation: an array of three whose last line is the count.
    while !String::from_utf8_lossy(&seen).ends_with(":1\r\n") {
        assert_eq!(
            stream.read(&mut byte).unwrap(),
            1,
            "{:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.push(byte[0]);
    }
    assert!(
        seen.starts_with(b"+OK\r\n"),
        "{:?}",
        String::from_utf8_lossy(&seen)
    );
    stream
}

/// Whether the server closed `stream` (within a second: what it sends is read past).
fn closed(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(1)))
        .unwrap();
    let mut buffer = [0u8; 256];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn subscribers_whose_channels_are_taken_away_are_disconnected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut admin = redis_connection(&server);
    for user in ["u", "other"] {
        let _: () = query(
            &mut admin,
            &[
                "ACL",
                "SETUSER",
                user,
                "on",
                ">pw",
                "+@all",
                "resetchannels",
                "&chan*",
            ],
        )
        .unwrap();
    }
    let mut channel = subscribed(&server, "u", "SUBSCRIBE", "chan1");
    let mut pattern = subscribed(&server, "u", "PSUBSCRIBE", "chan*");
    let mut shard = subscribed(&server, "u", "SSUBSCRIBE", "chan2");
    let mut untouched = subscribed(&server, "other", "SUBSCRIBE", "chan3");

    // chan1 stays allowed; the pattern is no longer one of the user's, nor is chan2.
    let _: () = query(
        &mut admin,
        &["ACL", "SETUSER", "u", "resetchannels", "&chan1"],
    )
    .unwrap();
    assert!(closed(&mut pattern), "the pattern subscriber is closed");
    assert!(closed(&mut shard), "the shard subscriber is closed");
    assert!(!closed(&mut channel), "a subscriber still allowed stays");
    assert!(!closed(&mut untouched), "another user's subscriber stays");
    let published: i64 = query(&mut admin, &["PUBLISH", "chan1", "m"]).unwrap();
    assert_eq!(published, 1);

    let _: () = query(&mut admin, &["ACL", "SETUSER", "u", "resetchannels"]).unwrap();
    assert!(closed(&mut channel), "no channel is left to it");
    assert!(!closed(&mut untouched));
}
