//! Arithmetic over decimal numbers: `+ - * / % ^` and parentheses, as the built-in
//! calculator tool evaluates them and as scoring reads an expression argument
//! (`args_compare: evaluates_to`).

/// The deepest nesting of parentheses, unary minus signs and powers accepted: the evaluator
/// recurses per level.
pub(crate) const MAX_DEPTH: usize = 64;

/// The value of `expression` (`48000 * 0.15 + 2500`); `^` is a power, right-associative.
///
/// # Errors
///
/// A message naming the first character that is not part of an expression and its 1-based
/// position, a missing `)`, division by zero, or nesting deeper than [`MAX_DEPTH`].
pub(crate) fn evaluate(expression: &str) -> Result<f64, String> {
    let mut calculator = Calculator {
        text: expression.as_bytes(),
        at: 0,
        depth: 0,
    };
    let value = calculator.sum()?;
    calculator.skip_space();
    if calculator.at < expression.len() {
        let rest = &expression[calculator.at..];
        let next = rest.chars().next().unwrap_or(' ');
        return Err(format!(
            "unexpected `{next}` at position {}; only numbers, + - * / % ^ and parentheses are allowed",
            calculator.at + 1
        ));
    }
    Ok(value)
}

/// Recursive-descent evaluation of `+ - * / % ^` and parentheses over decimal numbers.
struct Calculator<'a> {
    text: &'a [u8],
    at: usize,
    /// Open parentheses and unary minus signs around the current position.
    depth: usize,
}

impl Calculator<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, symbol: u8) -> bool {
        self.skip_space();
        let found = self.text.get(self.at) == Some(&symbol);
        self.at += usize::from(found);
        found
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        loop {
            if self.eat(b'+') {
                value += self.product()?;
            } else if self.eat(b'-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.power()?;
        loop {
            if self.eat(b'*') {
                value *= self.power()?;
            } else if self.eat(b'/') || self.eat(b'%') {
                let remainder = self.text[self.at - 1] == b'%';
                let divisor = self.power()?;
                if divisor == 0.0 {
                    return Err("division by zero".into());
                }
                value = if remainder {
                    value % divisor
                } else {
                    value / divisor
                };
            } else {
                return Ok(value);
            }
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.eat(b'^') {
            self.depth += 1;
            let exponent = self.power()?;
            self.depth -= 1;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "the expression nests deeper than {MAX_DEPTH} levels"
            ));
        }
        if self.eat(b'-') {
            self.depth += 1;
            let value = -self.unary()?;
            self.depth -= 1;
            return Ok(value);
        }
        if self.eat(b'(') {
            self.depth += 1;
            let value = self.sum()?;
            self.depth -= 1;
            if !self.eat(b')') {
                return Err(format!("missing `)` at position {}", self.at + 1));
            }
            return Ok(value);
        }
        self.skip_space();
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
        {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default();
        digits.parse().map_err(|_| match self.text.get(self.at) {
            Some(c) => format!("unexpected `{}` at position {}; only numbers, + - * / % ^ and parentheses are allowed", *c as char, self.at + 1),
            None => "the expression ends too early".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! Arithmetic: precedence and parentheses hold; anything else is refused at its position.

    use super::*;

    #[test]
    fn evaluates_with_precedence_and_parentheses() {
        assert_eq!(evaluate("48000 * 0.15 + 2500"), Ok(9700.0));
        assert_eq!(evaluate("2 ^ 3 ^ 2"), Ok(512.0));
        assert_eq!(evaluate("-(3 - 5) * 2"), Ok(4.0));
        assert_eq!(evaluate("7 % 4"), Ok(3.0));
    }

    #[test]
    fn rejects_what_is_not_arithmetic_with_its_position() {
        assert_eq!(
            evaluate("15% of 48000"),
            Err("unexpected `o` at position 5; only numbers, + - * / % ^ and parentheses are allowed".to_owned())
        );
        assert_eq!(evaluate("1 / 0"), Err("division by zero".to_owned()));
        assert_eq!(
            evaluate(&"(".repeat(100)),
            Err("the expression nests deeper than 64 levels".to_owned())
        );
    }
}
