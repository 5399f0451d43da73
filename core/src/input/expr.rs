//! A tiny integer expression over one variable, for inputs that describe a per-lane address as
//! a formula (`banks`: `"(lane * 33 + 5) * 4"`).
//!
//! Grammar (the usual precedence, left-associative):
//!
//! ```text
//! expr   = term   (("+" | "-") term)*
//! term   = factor (("*" | "/" | "%") factor)*
//! factor = "-" factor | "(" expr ")" | INTEGER | VARIABLE
//! ```
//!
//! Arithmetic is on `i64`, checked: overflow and division or remainder by zero are errors, not
//! wrap-arounds. `/` truncates toward zero and `%` takes the dividend's sign, as in C and CUDA.
//! The text is bounded ([`MAX_LEN`] characters) and so is the nesting ([`MAX_DEPTH`]), so no
//! input can exhaust the stack.

use crate::Error;
use crate::text::Text;

/// Longest expression accepted (characters).
pub const MAX_LEN: usize = 200;

/// Deepest nesting of parentheses and unary minus accepted.
pub const MAX_DEPTH: usize = 32;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// The variable.
    Var,
    /// `-e`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(Op, Box<Expr>, Box<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`, truncating toward zero.
    Div,
    /// `%`, the dividend's sign.
    Rem,
}

/// Parses `text` with variable `var` (e.g. `lane`); errors name `key`.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: empty, longer than [`MAX_LEN`], nested deeper than
/// [`MAX_DEPTH`], an unknown word or character (with its position), an integer past `i64`, or
/// text left over.
pub fn parse(text: &str, var: &str, key: &str) -> Result<Expr, Error> {
    if text.chars().count() > MAX_LEN {
        return Err(Error::input(
            key,
            Text::new(
                format!(
                    "at most {MAX_LEN} characters; this one has {}",
                    text.chars().count()
                ),
                format!("至多 {MAX_LEN} 个字符；此式有 {} 个", text.chars().count()),
            ),
        ));
    }
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        var,
        key,
        depth: 0,
    };
    p.skip();
    if p.i >= p.s.len() {
        return Err(Error::input_fixed(
            key,
            "the expression is empty",
            "表达式为空",
        ));
    }
    let e = p.expr()?;
    p.skip();
    if p.i < p.s.len() {
        return Err(p.fail(Text::new(
            "expected an operator (+ - * / %) or the end".into(),
            "应为运算符（+ - * / %）或结尾".into(),
        )));
    }
    Ok(e)
}

impl Expr {
    /// The value at `v`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming `key`: overflow past `i64`, or division / remainder by 0.
    pub fn eval(&self, v: i64, key: &str) -> Result<i64, Error> {
        match self {
            Expr::Int(n) => Ok(*n),
            Expr::Var => Ok(v),
            Expr::Neg(e) => e.eval(v, key)?.checked_neg().ok_or_else(|| {
                Error::input_fixed(key, "overflows a 64-bit integer", "超出 64 位整数")
            }),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(v, key)?, b.eval(v, key)?);
                if matches!(op, Op::Div | Op::Rem) && b == 0 {
                    return Err(Error::input(
                        key,
                        Text::new(
                            format!("division by zero at {v}"),
                            format!("在 {v} 处除以零"),
                        ),
                    ));
                }
                match op {
                    Op::Add => a.checked_add(b),
                    Op::Sub => a.checked_sub(b),
                    Op::Mul => a.checked_mul(b),
                    Op::Div => a.checked_div(b),
                    Op::Rem => a.checked_rem(b),
                }
                .ok_or_else(|| {
                    Error::input(
                        key,
                        Text::new(
                            format!("overflows a 64-bit integer at {v}"),
                            format!("在 {v} 处超出 64 位整数"),
                        ),
                    )
                })
            }
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    var: &'a str,
    key: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip();
        self.s.get(self.i).copied()
    }

    fn fail(&self, what: Text) -> Error {
        let at: String = String::from_utf8_lossy(self.s.get(self.i..).unwrap_or_default())
            .chars()
            .take(12)
            .collect();
        let quoted = if at.is_empty() {
            String::new()
        } else {
            format!(" (\"{at}\")")
        };
        let quoted_zh = if at.is_empty() {
            String::new()
        } else {
            format!("（\"{at}\"）")
        };
        let n = self.i + 1;
        Error::input(
            self.key,
            Text::new(
                format!("at character {n}{quoted}: {}", what.en),
                format!("第 {n} 个字符处{quoted_zh}：{}", what.zh),
            ),
        )
    }

    fn expr(&mut self) -> Result<Expr, Error> {
        let mut e = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let op = if c == b'+' { Op::Add } else { Op::Sub };
            e = Expr::Bin(op, Box::new(e), Box::new(self.term()?));
        }
        Ok(e)
    }

    fn term(&mut self) -> Result<Expr, Error> {
        let mut e = self.factor()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.i += 1;
            let op = match c {
                b'*' => Op::Mul,
                b'/' => Op::Div,
                _ => Op::Rem,
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.factor()?));
        }
        Ok(e)
    }

    fn factor(&mut self) -> Result<Expr, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail(Text::new(
                format!("nested deeper than {MAX_DEPTH}"),
                format!("嵌套深于 {MAX_DEPTH} 层"),
            )));
        }
        let e = self.atom();
        self.depth -= 1;
        e
    }

    fn atom(&mut self) -> Result<Expr, Error> {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Ok(Expr::Neg(Box::new(self.factor()?)))
            }
            Some(b'(') => {
                self.i += 1;
                let e = self.expr()?;
                if self.peek() != Some(b')') {
                    return Err(self.fail(Text::new("expected `)`".into(), "应为 `)`".into())));
                }
                self.i += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(self.s.get(start..self.i).unwrap_or_default())
                    .unwrap_or_default();
                digits.parse().map(Expr::Int).map_err(|_| {
                    self.i = start;
                    self.fail(Text::new(
                        "an integer past 64 bits".into(),
                        "整数超出 64 位".into(),
                    ))
                })
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.i += 1;
                }
                let word = self.s.get(start..self.i).unwrap_or_default();
                if word == self.var.as_bytes() {
                    Ok(Expr::Var)
                } else {
                    self.i = start;
                    Err(self.fail(Text::new(
                        format!("unknown name; the only variable is `{}`", self.var),
                        format!("未知的名字；唯一的变量是 `{}`", self.var),
                    )))
                }
            }
            Some(_) => Err(self.fail(Text::new(
                format!("expected an integer, `{}`, `-` or `(`", self.var),
                format!("应为整数、`{}`、`-` 或 `(`", self.var),
            ))),
            None => Err(self.fail(Text::new(
                "the expression ends too early".into(),
                "表达式过早结束".into(),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, v: i64) -> i64 {
        parse(text, "lane", "e").unwrap().eval(v, "e").unwrap()
    }

    fn problem(text: &str) -> String {
        match parse(text, "lane", "expression").and_then(|e| e.eval(3, "expression")) {
            Err(Error::InvalidInput { key, problem }) => {
                assert_eq!(key, "expression");
                problem.en
            }
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn precedence_associativity_and_c_division() {
        assert_eq!(at("(lane * 33 + 5) * 4", 3), (3 * 33 + 5) * 4);
        assert_eq!(at("1 + 2 * 3", 0), 7);
        assert_eq!(at("10 - 4 - 3", 0), 3, "left-associative");
        assert_eq!(at("100 / 10 / 5", 0), 2);
        assert_eq!(at("-7 / 2", 0), -3, "truncates toward zero");
        assert_eq!(at("-7 % 2", 0), -1, "the dividend's sign");
        assert_eq!(at("--lane", 5), 5);
        assert_eq!(at(" lane%8*4 ", 13), 20);
    }

    #[test]
    fn errors_say_where_and_why() {
        assert!(problem("lane +").contains("ends too early"));
        assert!(problem("lane * tid").contains("unknown name"));
        assert!(problem("(lane").contains("expected `)`"));
        assert!(problem("lane 4").contains("character 6"));
        assert!(problem("lane / (lane - 3)").contains("division by zero"));
        assert!(problem("9223372036854775807 + lane").contains("overflows"));
        assert!(problem("99999999999999999999").contains("64 bits"));
        assert!(problem("").contains("empty"));
        assert!(problem("lane $ 2").contains("expected an operator"));
        assert!(problem(&"1+".repeat(150)).contains("at most 200"));
        assert!(problem(&format!("{}1{}", "(".repeat(40), ")".repeat(40))).contains("deeper"));
        assert!(problem("ℓ").contains("character 1"));
    }
}
