//! srt (in progress)
