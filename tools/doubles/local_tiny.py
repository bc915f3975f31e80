"""A tiny, randomly initialised chat model for tests and benchmarks of the `local` backend.

The hub cannot be reached everywhere, so tests make their own model: a byte-level BPE tokenizer
trained on a few kilobytes of Python (this package's own sources), a ChatML chat template, and a
2-layer Qwen2 with 32-wide hidden states (~260 KB of weights), saved with save_pretrained so the
real loading code reads it through `local:PATH`. Its text is garbage; its behaviour is real.

Its output head gives the special tokens zero weight, so greedy decoding never picks them (the
other 600 logits are random, some positive): a greedy answer always runs to the token limit.
`stop_at_once=True` zeroes the whole head instead: every logit ties, greedy takes id 0, which is the
end-of-turn token, so the answer is empty and stops at once.

Needs the `local` extra (torch, transformers, tokenizers).
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["<|im_end|>", "<|im_start|>", "<|endoftext|>"]  # <|im_end|> is id 0 (see stop_at_once)
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus() -> str:
    import server.backends

    here = Path(server.backends.__file__).resolve().parent  # the backends' own sources: real Python text
    texts = [(here / name).read_text(encoding="utf-8") for name in ("prompts.py", "extract.py", "config.py")]
    return "\n".join(texts)[:24_000]


# The shape of the default model (Qwen/Qwen2.5-Coder-0.5B-Instruct): random weights of this shape cost
# exactly what the real ones cost per token, so the benchmark can measure its speed without the hub.
DEFAULT_MODEL_SHAPE = {
    "hidden": 896,
    "layers": 24,
    "heads": 14,
    "kv_heads": 2,
    "intermediate": 4864,
    "model_vocab": 151_936,
    "tie": True,
    "context": 32_768,
}
# Qwen2.5-Coder-1.5B's shape: the embedded default model, for speed comparisons
QWEN_15B_SHAPE = {**DEFAULT_MODEL_SHAPE, "hidden": 1536, "layers": 28, "heads": 12, "intermediate": 8960}


def build_tiny_model(
    directory: str | Path,
    *,
    vocab_size: int = 600,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    intermediate: int | None = None,
    model_vocab: int | None = None,
    tie: bool = False,
    context: int = 4096,
    stop_at_once: bool = False,
    chat_template: str | None = CHAT_TEMPLATE,
    seed: int = 0,
) -> Path:
    """Train the tokenizer, initialise the model, save both to `directory`; returns the path.

    `model_vocab` larger than the tokenizer's vocabulary gives the model a full-size embedding and
    output head (for speed measurements); the extra rows get zero output weight, so greedy decoding
    never picks an id the tokenizer cannot decode."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([_corpus()], trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    tokenizer.save_pretrained(out)

    n_tokens = bpe.get_vocab_size()
    config = Qwen2Config(
        vocab_size=max(model_vocab or 0, n_tokens),
        hidden_size=hidden,
        intermediate_size=intermediate or hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=context,
        tie_word_embeddings=tie,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        head = model.lm_head.weight  # with `tie`, also the input embedding: zero rows embed as zeros
        if stop_at_once:
            head.zero_()
        else:
            for token in SPECIALS:
                head[bpe.token_to_id(token)].zero_()
            head[n_tokens:].zero_()
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(out)
    return out
