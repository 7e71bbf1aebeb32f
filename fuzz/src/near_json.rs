//! Text that is JSON, or nearly: the fuzzer's bytes pick tokens from
//! tables of the spellings the readers judge differently (escapes JS writes
//! and ones it does not, surrogate pairs and lone halves, numbers in and out
//! of JS's form, duplicate and array-index keys, white space, nesting around
//! the depth limit) and now and then a broken one (a bad escape, a raw
//! control, invalid UTF-8, a missing comma). Arbitrary bytes rarely get past
//! the first token; this reaches the rules behind it.

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "7",
    "-12",
    "1.0",
    "0.1",
    "1e21",
    "1E21",
    "1e+21",
    "1e400",
    "-1e400",
    "5e-324",
    "1.5e-7",
    "100e0",
    "9007199254740993",
    "123456789012345",
    "1234567890123456",
    "1700000000000",
    "01",
    "1.",
    "-",
    ".5",
    "1e",
    "+1",
];

const STRING_PARTS: &[&[u8]] = &[
    b"a",
    b"role",
    b"text",
    "é".as_bytes(),
    "😀".as_bytes(),
    "\u{2028}".as_bytes(),
    b"\x7f",
    br"\n",
    br"\t",
    br#"\""#,
    br"\\",
    br"\/",
    br"\b",
    br"\f",
    br"\r",
    br"\u0000",
    br"\u001f",
    br"\u001F",
    br"\u000a",
    br"\u00e9",
    br"\u0041",
    br"\ud83d\ude00",
    br"\uD83D\uDE00",
    br"\ud83d\uDE00",
    br"\ud800",
    br"\udc00",
    br"\uDC00",
    br"\ud83d\u0041",
    br"\ud83d\ud83d",
    br"\x",
    br"\u12",
    b"\\",
    b"\x01",
    b"\t",
    b"\xff",
    b"\xe2\x82",
    b"\xed\xa0\x80",
];

const KEYS: &[&str] = &[
    "a",
    "b",
    "role",
    "content",
    "0",
    "1",
    "2",
    "10",
    "01",
    "4294967294",
    "4294967295",
    "__proto__",
    r"\u0061",
    r"\ud800",
    "",
];

const WS: &[&[u8]] = &[
    b" ",
    b"\t",
    b"\n",
    b"\r",
    b"  \n ",
    "\u{a0}".as_bytes(),
    b"\x0b",
];

struct Gen<'a> {
    data: &'a [u8],
    at: usize,
    out: Vec<u8>,
}

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn pick<T: Copy>(&mut self, table: &[T]) -> T {
        table[usize::from(self.byte()) % table.len()]
    }

    fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    /// White space now and then (between tokens: never canonical).
    fn ws(&mut self) {
        if self.byte().is_multiple_of(8) {
            let w = self.pick(WS);
            self.out.extend_from_slice(w);
        }
    }

    fn string(&mut self) {
        self.out.push(b'"');
        let parts = self.byte() % 6;
        for _ in 0..parts {
            let p = self.pick(STRING_PARTS);
            self.out.extend_from_slice(p);
        }
        if !self.byte().is_multiple_of(32) {
            self.out.push(b'"');
        }
    }

    fn separator(&mut self, c: u8) {
        self.ws();
        match self.byte() % 64 {
            0 => {}
            1 => self.out.extend_from_slice(b",,"),
            _ => self.out.push(c),
        }
        self.ws();
    }

    fn value(&mut self, depth: usize) {
        if self.done() {
            self.out.extend_from_slice(b"null");
            return;
        }
        match self.byte() % 16 {
            0 => {
                let w = self.pick(&["null", "true", "false", "nul", "tru", "NaN"]);
                self.out.extend_from_slice(w.as_bytes());
            }
            1..=3 => {
                let n = self.pick(NUMBERS);
                self.out.extend_from_slice(n.as_bytes());
            }
            4..=6 => self.string(),
            7..=9 if depth < 24 => {
                self.out.push(b'[');
                self.ws();
                let n = self.byte() % 5;
                for i in 0..n {
                    if i > 0 {
                        self.separator(b',');
                    }
                    self.value(depth + 1);
                }
                self.ws();
                if !self.byte().is_multiple_of(32) {
                    self.out.push(b']');
                }
            }
            10..=12 if depth < 24 => {
                self.out.push(b'{');
                self.ws();
                let n = self.byte() % 6;
                for i in 0..n {
                    if i > 0 {
                        self.separator(b',');
                    }
                    let k = self.pick(KEYS);
                    self.out.push(b'"');
                    self.out.extend_from_slice(k.as_bytes());
                    self.out.push(b'"');
                    self.separator(b':');
                    self.value(depth + 1);
                }
                self.ws();
                if !self.byte().is_multiple_of(32) {
                    self.out.push(b'}');
                }
            }
            13 if self.byte().is_multiple_of(4) => {
                // Nesting around the limit (1000 levels).
                let k = 995 + usize::from(self.byte() % 10);
                let object = self.byte().is_multiple_of(2);
                for _ in 0..k {
                    self.out
                        .extend_from_slice(if object { b"{\"a\":" } else { b"[" });
                }
                self.value(depth + 1);
                for _ in 0..k {
                    self.out.push(if object { b'}' } else { b']' });
                }
            }
            14 => {
                self.ws();
                self.value(depth + 1);
                self.ws();
            }
            _ => {
                let b = self.byte();
                self.out.push(b);
            }
        }
    }
}

/// A near-JSON text made from `data`.
pub fn near_json(data: &[u8]) -> Vec<u8> {
    let mut g = Gen {
        data,
        at: 0,
        out: Vec::new(),
    };
    g.ws();
    g.value(0);
    g.ws();
    g.out
}
