//! fixtures
