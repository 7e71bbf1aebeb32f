use napi_derive::napi;

#[napi]
pub fn ping() -> u32 {
    1
}

pub fn core_add(a: u32) -> u32 { a + 1 }

#[cfg(test)]
mod tests {
    #[test]
    fn t() { assert_eq!(super::core_add(1), 2); }
}
