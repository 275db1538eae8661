//! The changelog's view of the one YAML layer (`crate::recipe::yaml`): the
//! same tree; a repeated key is an error, as the reference validator's
//! `UniqueKeyLoader` makes it.
pub(crate) use crate::recipe::yaml::{Node, Value, line_col, parse_unique as parse, utf8};
