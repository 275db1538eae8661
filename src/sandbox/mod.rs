//! The sandbox GitHub: a stateful in-memory GitHub served over real HTTP.
