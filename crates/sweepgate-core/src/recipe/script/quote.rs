//! Shell quoting undone on word text.

pub(super) fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\'
            && let Some(&n) = it.peek()
            && matches!(n, '"' | '\\' | '$' | '`' | '\n')
        {
            it.next();
            if n != '\n' {
                out.push(n);
            }
            continue;
        }
        out.push(c);
    }
    out
}

pub(super) fn unescape_word(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next()
                && n != '\n'
            {
                out.push(n);
            }
            continue;
        }
        out.push(c);
    }
    out
}
