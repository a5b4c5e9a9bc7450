//! The price table (`--prices`, `prices:` in toolgate.yaml): model name to US dollars per
//! million input and output tokens, written by the user (providers' prices change and differ
//! by contract, so toolgate ships none).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

use crate::score::usage::Price;

/// The price of `model` in the table at `path` (YAML or JSON, a map of model name to
/// `{prompt, completion}`).
///
/// Errors: the file cannot be read or parsed, a price is negative or not finite (naming the
/// model and field), or `model` is not in the table (naming the models that are).
pub(crate) fn price_of(path: &Path, model: &str) -> Result<Price> {
    let text = crate::fs::read_text(path, "price table", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    let table =
        parse(&text).with_context(|| format!("invalid price table `{}`", path.display()))?;
    match table.get(model) {
        Some(price) => Ok(*price),
        None => bail!(
            "price table `{}` has no entry for the model `{model}` (it prices: {})",
            path.display(),
            if table.is_empty() {
                "nothing".to_owned()
            } else {
                table.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        ),
    }
}

/// The whole table at `path`, checked: read for every agent, so that a broken table fails
/// every job that names it, not only the model jobs.
///
/// Errors: as [`price_of`], but for a missing model.
pub(crate) fn load(path: &Path) -> Result<BTreeMap<String, Price>> {
    let text = crate::fs::read_text(path, "price table", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    parse(&text).with_context(|| format!("invalid price table `{}`", path.display()))
}

/// Parses price table text; see [`price_of`].
fn parse(text: &str) -> Result<BTreeMap<String, Price>> {
    let table: BTreeMap<String, Price> =
        serde_saphyr::from_str(text).map_err(|error| anyhow::anyhow!("{error}"))?;
    for (model, price) in &table {
        for (field, value) in [("prompt", price.prompt), ("completion", price.completion)] {
            if !value.is_finite() || value < 0.0 {
                bail!(
                    "{model}.{field}: {value} is not a price in US dollars per million tokens, 0 or more"
                );
            }
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    //! Price tables: a model's entry, a missing model, a negative price, an unknown field.
    use super::*;

    #[test]
    fn a_model_is_priced_from_its_entry_and_bad_tables_say_where() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "gpt-4o-mini: {prompt: 0.15, completion: 0.6}\nqwen: {prompt: 0, completion: 0}\n",
        )
        .expect("write");
        assert_eq!(
            price_of(&path, "gpt-4o-mini").expect("priced"),
            Price {
                prompt: 0.15,
                completion: 0.6
            }
        );
        let missing = price_of(&path, "llama")
            .expect_err("not priced")
            .to_string();
        assert!(
            missing.ends_with("has no entry for the model `llama` (it prices: gpt-4o-mini, qwen)"),
            "{missing}"
        );
        std::fs::write(&path, "m: {prompt: -1, completion: 0}\n").expect("write");
        let negative = format!("{:#}", price_of(&path, "m").expect_err("negative"));
        assert!(
            negative.contains("m.prompt: -1 is not a price in US dollars per million tokens"),
            "{negative}"
        );
        std::fs::write(&path, "m: {prompt: 1, completion: 1, cached: 0.5}\n").expect("write");
        let unknown = format!("{:#}", price_of(&path, "m").expect_err("unknown field"));
        assert!(unknown.contains("cached"), "{unknown}");
    }
}
