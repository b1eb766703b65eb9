//! Keyspace events: what Redis's keyspace notifications announce. An operation records
//! the event it performs (`lpush`, `del`, `expire`...) in the change feed, under the class
//! Redis files it in, when that class is selected ([`Keyspace::set_notify_events`]); the
//! letters of `notify-keyspace-events` select classes and channels.
//!
//! [`Keyspace::set_notify_events`]: super::Keyspace::set_notify_events

use std::fmt;

/// A set of event classes and channels, as the letters of `notify-keyspace-events`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EventClasses(u32);

impl EventClasses {
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: EventClasses = EventClasses(1 << 0);
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: EventClasses = EventClasses(1 << 1);
    /// `g`: generic commands (DEL, EXPIRE, RENAME...).
    pub const GENERIC: EventClasses = EventClasses(1 << 2);
    /// `$`: string commands.
    pub const STRING: EventClasses = EventClasses(1 << 3);
    /// `l`: list commands.
    pub const LIST: EventClasses = EventClasses(1 << 4);
    /// `s`: set commands.
    pub const SET: EventClasses = EventClasses(1 << 5);
    /// `h`: hash commands.
    pub const HASH: EventClasses = EventClasses(1 << 6);
    /// `z`: sorted-set commands.
    pub const ZSET: EventClasses = EventClasses(1 << 7);
    /// `x`: a key expired.
    pub const EXPIRED: EventClasses = EventClasses(1 << 8);
    /// `e`: a key was evicted.
    pub const EVICTED: EventClasses = EventClasses(1 << 9);
    /// `t`: stream commands.
    pub const STREAM: EventClasses = EventClasses(1 << 10);
    /// `m`: a read missed its key.
    pub const KEY_MISS: EventClasses = EventClasses(1 << 11);
    /// `d`: module events (accepted; Quiver has no modules).
    pub const MODULE: EventClasses = EventClasses(1 << 13);
    /// `n`: a key was created.
    pub const NEW: EventClasses = EventClasses(1 << 14);
    /// `A`: every class but `m` and `n`.
    pub const ALL: EventClasses = EventClasses(
        Self::GENERIC.0
            | Self::STRING.0
            | Self::LIST.0
            | Self::SET.0
            | Self::HASH.0
            | Self::ZSET.0
            | Self::EXPIRED.0
            | Self::EVICTED.0
            | Self::STREAM.0
            | Self::MODULE.0,
    );

    /// No class: notifications off.
    pub const NONE: EventClasses = EventClasses(0);

    /// The letters of each class, in the order Redis prints them.
    const LETTERS: [(char, EventClasses); 11] = [
        ('g', Self::GENERIC),
        ('$', Self::STRING),
        ('l', Self::LIST),
        ('s', Self::SET),
        ('h', Self::HASH),
        ('z', Self::ZSET),
        ('x', Self::EXPIRED),
        ('e', Self::EVICTED),
        ('t', Self::STREAM),
        ('d', Self::MODULE),
        ('n', Self::NEW),
    ];

    /// Parses `notify-keyspace-events` letters; `None` names no character Redis accepts.
    pub fn parse(text: &str) -> Option<EventClasses> {
        let mut classes = EventClasses::NONE;
        for c in text.chars() {
            classes.0 |= match c {
                'A' => Self::ALL.0,
                'K' => Self::KEYSPACE.0,
                'E' => Self::KEYEVENT.0,
                'm' => Self::KEY_MISS.0,
                _ => Self::LETTERS.iter().find(|(l, _)| *l == c)?.1.0,
            };
        }
        Some(classes)
    }

    /// Whether every class of `other` is in `self`.
    pub fn contains(self, other: EventClasses) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether `self` and `other` share a class.
    pub fn intersects(self, other: EventClasses) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether events are published at all: some class and some channel selected.
    pub fn publishes(self) -> bool {
        self.intersects(Self::KEYSPACE.union(Self::KEYEVENT))
            && self.0 & !(Self::KEYSPACE.0 | Self::KEYEVENT.0) != 0
    }

    /// Both sets together.
    pub const fn union(self, other: EventClasses) -> EventClasses {
        EventClasses(self.0 | other.0)
    }

    /// The raw bits (for an atomic).
    pub(crate) fn bits(self) -> u32 {
        self.0
    }

    pub(crate) fn from_bits(bits: u32) -> EventClasses {
        EventClasses(bits)
    }
}

/// Redis's spelling: `A` for all classes, else their letters, then `K`, `E` and `m`.
/// Like Redis, `A` hides an `n` beside it (the class stays selected).
impl fmt::Display for EventClasses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.contains(Self::ALL) {
            f.write_str("A")?;
        } else {
            for (letter, class) in Self::LETTERS {
                if self.contains(class) {
                    write!(f, "{letter}")?;
                }
            }
        }
        for (letter, class) in [
            ('K', Self::KEYSPACE),
            ('E', Self::KEYEVENT),
            ('m', Self::KEY_MISS),
        ] {
            if self.contains(class) {
                write!(f, "{letter}")?;
            }
        }
        Ok(())
    }
}

/// One keyspace event: its class and Redis's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Event {
    /// The class that selects it.
    pub class: EventClasses,
    /// The name published (`lpush`, `del`, `expired`...).
    pub name: &'static str,
}

impl Event {
    /// An event of `class` named `name`.
    pub const fn new(class: EventClasses, name: &'static str) -> Event {
        Event { class, name }
    }

    /// A generic-class event (`del`, `expire`, `rename_from`...).
    pub const fn generic(name: &'static str) -> Event {
        Event::new(EventClasses::GENERIC, name)
    }
}

/// A key was removed by a command.
pub(crate) const DEL: Event = Event::generic("del");
/// A TTL was set.
pub(crate) const EXPIRE: Event = Event::generic("expire");
/// A TTL was removed.
pub(crate) const PERSIST: Event = Event::generic("persist");
/// A key was created.
pub(crate) const NEW: Event = Event::new(EventClasses::NEW, "new");
/// A read found no key.
pub(crate) const KEY_MISS: Event = Event::new(EventClasses::KEY_MISS, "keymiss");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_read_and_print_as_redis_does() {
        for (text, shown) in [
            ("", ""),
            ("KEA", "AKE"),
            ("Elg", "glE"),
            ("$lshzxetdgK", "AK"),
            ("xeK", "xeK"),
            ("KEn", "nKE"),
        ] {
            let classes = EventClasses::parse(text).unwrap();
            assert_eq!(classes.to_string(), shown, "{text}");
            assert_eq!(EventClasses::parse(shown), Some(classes));
        }
        let hidden = EventClasses::parse("AKEmn").unwrap();
        assert_eq!(hidden.to_string(), "AKEm");
        assert!(hidden.contains(EventClasses::NEW));
        assert_eq!(EventClasses::parse("Kq"), None);
    }

    #[test]
    fn only_a_class_with_a_channel_publishes() {
        assert!(!EventClasses::parse("A").unwrap().publishes());
        assert!(!EventClasses::parse("KE").unwrap().publishes());
        assert!(EventClasses::parse("Kg").unwrap().publishes());
        assert!(EventClasses::parse("Em").unwrap().publishes());
    }
}
