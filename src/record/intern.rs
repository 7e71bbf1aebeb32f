//! Interned strings: each distinct canonical text gets a small number, so
//! the phases compare ids and look them up in the state by index instead of
//! hashing strings on every render. One interner serves a whole log and the
//! state it is rendered with.

use crate::hash::HashMap;

pub type Sym = u32;

#[derive(Default, Clone)]
pub struct Interner {
    map: HashMap<Box<[u8]>, Sym>,
    texts: Vec<Box<[u8]>>,
}

impl Interner {
    pub fn intern(&mut self, text: &[u8]) -> Sym {
        if let Some(&s) = self.map.get(text) {
            return s;
        }
        let s = self.texts.len() as Sym;
        let owned: Box<[u8]> = text.into();
        self.texts.push(owned.clone());
        self.map.insert(owned, s);
        s
    }

    /// The symbol of a text, if it was ever interned.
    pub fn find(&self, text: &[u8]) -> Option<Sym> {
        self.map.get(text).copied()
    }

    /// Interns every text of `other`; the result maps its symbols to ours.
    pub fn absorb(&mut self, other: &Interner) -> Vec<Sym> {
        other.texts.iter().map(|t| self.intern(t)).collect()
    }

    pub fn text(&self, s: Sym) -> &[u8] {
        &self.texts[s as usize]
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.texts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn same_text_same_symbol() {
        let mut i = Interner::default();
        let a = i.intern(b"toolu_1");
        let b = i.intern(b"toolu_2");
        assert_ne!(a, b);
        assert_eq!(i.intern(b"toolu_1"), a);
        assert_eq!(i.text(b), b"toolu_2");
        assert_eq!(i.find(b"nope"), None);
        assert_eq!(i.len(), 2);
    }
}
