"""The takes-quality suite (seed 000): a 3-model panel scores a sample of takes on a 5-dimension rubric."""

# The seed's default panel, one per provider family.
DEFAULT_MODELS = "openai:gpt-4o,anthropic:claude-opus-4-7,google:gemini-1.5-pro"
