//! models_md (in progress)
