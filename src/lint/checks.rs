//! The lint's check ids: one closed list that the checks, the SARIF rules and `docs/lint.md`
//! all use (a test keeps the docs in step).

use serde::Serialize;

/// A lint check. Serialized (JSON, SARIF rule ids) as its snake_case id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum CheckId {
    /// The tool has no inputSchema.
    #[serde(rename = "missing_input_schema")]
    MissingInputSchema,
    /// The input schema's root is not an object schema.
    #[serde(rename = "input_schema_root_not_object")]
    InputSchemaRootNotObject,
    /// The output schema's root is not an object schema.
    #[serde(rename = "output_schema_root_not_object")]
    OutputSchemaRootNotObject,
    /// The schema is not valid JSON Schema (draft 2020-12).
    #[serde(rename = "invalid_schema")]
    InvalidSchema,
    /// A $ref points at nothing in its schema.
    #[serde(rename = "unresolved_ref")]
    UnresolvedRef,
    /// A $ref points outside the schema; it is never fetched.
    #[serde(rename = "remote_ref")]
    RemoteRef,
    /// A $ref refers to an enclosing schema.
    #[serde(rename = "recursive_schema")]
    RecursiveSchema,
    /// `required` names a property that is not defined.
    #[serde(rename = "required_not_in_properties")]
    RequiredNotInProperties,
    /// An array schema has no `items`.
    #[serde(rename = "array_missing_items")]
    ArrayMissingItems,
    /// An object schema has no `properties`.
    #[serde(rename = "object_missing_properties")]
    ObjectMissingProperties,
    /// A property's value is not a schema.
    #[serde(rename = "property_not_a_schema")]
    PropertyNotASchema,
    /// An enum value does not match the schema's type.
    #[serde(rename = "enum_type_mismatch")]
    EnumTypeMismatch,
    /// A parameter has no description.
    #[serde(rename = "missing_parameter_description")]
    MissingParameterDescription,
    /// `$schema` is not a JSON Schema dialect URI.
    #[serde(rename = "nonstandard_$schema")]
    NonstandardSchema,
    /// The tool has no name.
    #[serde(rename = "missing_tool_name")]
    MissingToolName,
    /// The tool name has characters a provider rejects.
    #[serde(rename = "invalid_tool_name")]
    InvalidToolName,
    /// The tool name is longer than a provider accepts.
    #[serde(rename = "tool_name_too_long")]
    ToolNameTooLong,
    /// A property key has characters or a length a provider rejects.
    #[serde(rename = "invalid_property_key")]
    InvalidPropertyKey,
    /// Two tools share a name.
    #[serde(rename = "duplicate_tool_name")]
    DuplicateToolName,
    /// The catalog has more tools than a provider accepts per request.
    #[serde(rename = "too_many_tools")]
    TooManyTools,
    /// The description does not state what the tool does.
    #[serde(rename = "unclear_purpose")]
    UnclearPurpose,
    /// The description does not say when to use the tool.
    #[serde(rename = "missing_usage_guidance")]
    MissingUsageGuidance,
    /// The description states no limits or errors.
    #[serde(rename = "unstated_limitations")]
    UnstatedLimitations,
    /// Most parameters say little beyond their names.
    #[serde(rename = "opaque_parameters")]
    OpaqueParameters,
    /// The description is short or does not say what the tool returns.
    #[serde(rename = "underspecified")]
    Underspecified,
    /// Examples are missing or contradict the schema.
    #[serde(rename = "exemplar_issues")]
    ExemplarIssues,
    /// The description judge: the purpose is unclear.
    #[serde(rename = "judge_unclear_purpose")]
    JudgeUnclearPurpose,
    /// The description judge: no guidance on when to use it.
    #[serde(rename = "judge_missing_usage_guidance")]
    JudgeMissingUsageGuidance,
    /// The description judge: limits and errors are unstated.
    #[serde(rename = "judge_unstated_limitations")]
    JudgeUnstatedLimitations,
    /// The description judge: the parameters are opaque.
    #[serde(rename = "judge_opaque_parameters")]
    JudgeOpaqueParameters,
    /// The description judge: the description is incomplete.
    #[serde(rename = "judge_underspecified")]
    JudgeUnderspecified,
    /// The description judge: examples are missing or wrong.
    #[serde(rename = "judge_exemplar_issues")]
    JudgeExemplarIssues,
    /// Two tools are too similar to tell apart.
    #[serde(rename = "look_alike_tools")]
    LookAlikeTools,
    /// The catalog costs more tokens than the budget.
    #[serde(rename = "token_budget_exceeded")]
    TokenBudgetExceeded,
    /// A tool costs more tokens than the per-tool budget.
    #[serde(rename = "tool_token_budget_exceeded")]
    ToolTokenBudgetExceeded,
    /// A tools/list entry is not an object.
    #[serde(rename = "tool_not_an_object")]
    ToolNotAnObject,
    /// tools/list paging stopped early or irregularly.
    #[serde(rename = "pagination_stopped")]
    PaginationStopped,
    /// A server could not be reached or listed.
    #[serde(rename = "server_unreachable")]
    ServerUnreachable,
    /// A tool result's text content differs from its structuredContent.
    #[serde(rename = "structured_text_mismatch")]
    StructuredTextMismatch,
    /// A tool result's structuredContent does not match the tool's outputSchema.
    #[serde(rename = "output_schema_violation")]
    OutputSchemaViolation,
    /// An optional parameter is nullable (`anyOf [T, null]`), shown as `T | null`.
    #[serde(rename = "nullable_parameter")]
    NullableParameter,
    /// An enum has values that are not strings, which the provider rejects.
    #[serde(rename = "non_string_enum")]
    NonStringEnum,
}

impl CheckId {
    /// Every check, in the order `docs/lint.md` lists them.
    pub const ALL: [CheckId; 42] = [
        CheckId::MissingInputSchema,
        CheckId::InputSchemaRootNotObject,
        CheckId::OutputSchemaRootNotObject,
        CheckId::InvalidSchema,
        CheckId::UnresolvedRef,
        CheckId::RemoteRef,
        CheckId::RecursiveSchema,
        CheckId::RequiredNotInProperties,
        CheckId::ArrayMissingItems,
        CheckId::ObjectMissingProperties,
        CheckId::PropertyNotASchema,
        CheckId::EnumTypeMismatch,
        CheckId::MissingParameterDescription,
        CheckId::NonstandardSchema,
        CheckId::MissingToolName,
        CheckId::InvalidToolName,
        CheckId::ToolNameTooLong,
        CheckId::InvalidPropertyKey,
        CheckId::DuplicateToolName,
        CheckId::TooManyTools,
        CheckId::UnclearPurpose,
        CheckId::MissingUsageGuidance,
        CheckId::UnstatedLimitations,
        CheckId::OpaqueParameters,
        CheckId::Underspecified,
        CheckId::ExemplarIssues,
        CheckId::JudgeUnclearPurpose,
        CheckId::JudgeMissingUsageGuidance,
        CheckId::JudgeUnstatedLimitations,
        CheckId::JudgeOpaqueParameters,
        CheckId::JudgeUnderspecified,
        CheckId::JudgeExemplarIssues,
        CheckId::LookAlikeTools,
        CheckId::TokenBudgetExceeded,
        CheckId::ToolTokenBudgetExceeded,
        CheckId::ToolNotAnObject,
        CheckId::PaginationStopped,
        CheckId::ServerUnreachable,
        CheckId::StructuredTextMismatch,
        CheckId::OutputSchemaViolation,
        CheckId::NullableParameter,
        CheckId::NonStringEnum,
    ];

    /// The stable snake_case id, as in reports and `docs/lint.md`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::MissingInputSchema => "missing_input_schema",
            CheckId::InputSchemaRootNotObject => "input_schema_root_not_object",
            CheckId::OutputSchemaRootNotObject => "output_schema_root_not_object",
            CheckId::InvalidSchema => "invalid_schema",
            CheckId::UnresolvedRef => "unresolved_ref",
            CheckId::RemoteRef => "remote_ref",
            CheckId::RecursiveSchema => "recursive_schema",
            CheckId::RequiredNotInProperties => "required_not_in_properties",
            CheckId::ArrayMissingItems => "array_missing_items",
            CheckId::ObjectMissingProperties => "object_missing_properties",
            CheckId::PropertyNotASchema => "property_not_a_schema",
            CheckId::EnumTypeMismatch => "enum_type_mismatch",
            CheckId::MissingParameterDescription => "missing_parameter_description",
            CheckId::NonstandardSchema => "nonstandard_$schema",
            CheckId::MissingToolName => "missing_tool_name",
            CheckId::InvalidToolName => "invalid_tool_name",
            CheckId::ToolNameTooLong => "tool_name_too_long",
            CheckId::InvalidPropertyKey => "invalid_property_key",
            CheckId::DuplicateToolName => "duplicate_tool_name",
            CheckId::TooManyTools => "too_many_tools",
            CheckId::UnclearPurpose => "unclear_purpose",
            CheckId::MissingUsageGuidance => "missing_usage_guidance",
            CheckId::UnstatedLimitations => "unstated_limitations",
            CheckId::OpaqueParameters => "opaque_parameters",
            CheckId::Underspecified => "underspecified",
            CheckId::ExemplarIssues => "exemplar_issues",
            CheckId::JudgeUnclearPurpose => "judge_unclear_purpose",
            CheckId::JudgeMissingUsageGuidance => "judge_missing_usage_guidance",
            CheckId::JudgeUnstatedLimitations => "judge_unstated_limitations",
            CheckId::JudgeOpaqueParameters => "judge_opaque_parameters",
            CheckId::JudgeUnderspecified => "judge_underspecified",
            CheckId::JudgeExemplarIssues => "judge_exemplar_issues",
            CheckId::LookAlikeTools => "look_alike_tools",
            CheckId::TokenBudgetExceeded => "token_budget_exceeded",
            CheckId::ToolTokenBudgetExceeded => "tool_token_budget_exceeded",
            CheckId::ToolNotAnObject => "tool_not_an_object",
            CheckId::PaginationStopped => "pagination_stopped",
            CheckId::ServerUnreachable => "server_unreachable",
            CheckId::StructuredTextMismatch => "structured_text_mismatch",
            CheckId::OutputSchemaViolation => "output_schema_violation",
            CheckId::NullableParameter => "nullable_parameter",
            CheckId::NonStringEnum => "non_string_enum",
        }
    }

    /// One line saying what the check finds (the SARIF rule description).
    pub fn description(self) -> &'static str {
        match self {
            CheckId::MissingInputSchema => "The tool has no inputSchema.",
            CheckId::InputSchemaRootNotObject => "The input schema's root is not an object schema.",
            CheckId::OutputSchemaRootNotObject => {
                "The output schema's root is not an object schema."
            }
            CheckId::InvalidSchema => "The schema is not valid JSON Schema (draft 2020-12).",
            CheckId::UnresolvedRef => "A $ref points at nothing in its schema.",
            CheckId::RemoteRef => "A $ref points outside the schema; it is never fetched.",
            CheckId::RecursiveSchema => "A $ref refers to an enclosing schema.",
            CheckId::RequiredNotInProperties => "`required` names a property that is not defined.",
            CheckId::ArrayMissingItems => "An array schema has no `items`.",
            CheckId::ObjectMissingProperties => "An object schema has no `properties`.",
            CheckId::PropertyNotASchema => "A property's value is not a schema.",
            CheckId::EnumTypeMismatch => "An enum value does not match the schema's type.",
            CheckId::MissingParameterDescription => "A parameter has no description.",
            CheckId::NonstandardSchema => "`$schema` is not a JSON Schema dialect URI.",
            CheckId::MissingToolName => "The tool has no name.",
            CheckId::InvalidToolName => "The tool name has characters a provider rejects.",
            CheckId::ToolNameTooLong => "The tool name is longer than a provider accepts.",
            CheckId::InvalidPropertyKey => {
                "A property key has characters or a length a provider rejects."
            }
            CheckId::DuplicateToolName => "Two tools share a name.",
            CheckId::TooManyTools => {
                "The catalog has more tools than a provider accepts per request."
            }
            CheckId::UnclearPurpose => "The description does not state what the tool does.",
            CheckId::MissingUsageGuidance => "The description does not say when to use the tool.",
            CheckId::UnstatedLimitations => "The description states no limits or errors.",
            CheckId::OpaqueParameters => "Most parameters say little beyond their names.",
            CheckId::Underspecified => {
                "The description is short or does not say what the tool returns."
            }
            CheckId::ExemplarIssues => "Examples are missing or contradict the schema.",
            CheckId::JudgeUnclearPurpose => "The description judge: the purpose is unclear.",
            CheckId::JudgeMissingUsageGuidance => {
                "The description judge: no guidance on when to use it."
            }
            CheckId::JudgeUnstatedLimitations => {
                "The description judge: limits and errors are unstated."
            }
            CheckId::JudgeOpaqueParameters => "The description judge: the parameters are opaque.",
            CheckId::JudgeUnderspecified => "The description judge: the description is incomplete.",
            CheckId::JudgeExemplarIssues => "The description judge: examples are missing or wrong.",
            CheckId::LookAlikeTools => "Two tools are too similar to tell apart.",
            CheckId::TokenBudgetExceeded => "The catalog costs more tokens than the budget.",
            CheckId::ToolTokenBudgetExceeded => {
                "A tool costs more tokens than the per-tool budget."
            }
            CheckId::ToolNotAnObject => "A tools/list entry is not an object.",
            CheckId::PaginationStopped => "tools/list paging stopped early or irregularly.",
            CheckId::ServerUnreachable => "A server could not be reached or listed.",
            CheckId::StructuredTextMismatch => {
                "A tool result's text content differs from its structuredContent."
            }
            CheckId::OutputSchemaViolation => {
                "A tool result's structuredContent does not match the tool's outputSchema."
            }
            CheckId::NullableParameter => "An optional parameter is nullable (`T | null`).",
            CheckId::NonStringEnum => "An enum has non-string values the provider rejects.",
        }
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    //! Check ids: each serializes as its snake case name, and `docs/lint.md` documents every one.

    use super::*;

    #[test]
    fn ids_serialize_as_their_snake_case_names() {
        for check in CheckId::ALL {
            assert_eq!(
                serde_json::to_value(check).expect("serializes"),
                serde_json::json!(check.as_str())
            );
        }
    }

    #[test]
    fn docs_lint_md_documents_every_check() {
        let docs = include_str!("../../docs/lint.md");
        for check in CheckId::ALL {
            assert!(
                docs.contains(&format!("`{}`", check.as_str())),
                "docs/lint.md does not document `{check}`"
            );
        }
    }
}
