//! codeowners (in progress)
