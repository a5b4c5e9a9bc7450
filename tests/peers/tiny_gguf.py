"""Writes a tiny llama-architecture GGUF model for the llama-cpp-python server tests.

Usage: python tiny_gguf.py OUT.gguf

The model is built, not trained, with llama.cpp's own writer (PyPI `gguf`), and is the same
file on every run: one layer, 32-wide, every weight zero. Zero weights make every logit zero,
so greedy sampling (temperature 0) picks the lowest token id the sampler allows, and the
vocabulary is ordered to make that a short, finished answer wherever the server constrains
the output by grammar (llama-cpp-python's `chatml-function-calling` chat format does for tool
calls):

- id 0 is the end-of-sequence token: free text (no grammar) ends at once, with an empty answer,
  and grammar-constrained text ends as soon as the grammar accepts;
- then `"` `}` `]` close strings, objects and arrays first, `<` ends a turn (`<|im_end|>`)
  before another call, `0` is the shortest number and `f` picks `functions.NAME:` over
  `message:`;
- then the rest of printable ASCII and `▁` (SentencePiece's space), then byte tokens for
  anything else (newlines, UTF-8).

The tokenizer is SentencePiece-style (`llama`), one token per character, so a prompt's length in
tokens is about its length in characters: a context window of a few hundred tokens overflows
on any scenario prompt.
"""

import sys

import gguf
import numpy as np

N_EMBD = 32
N_HEAD = 2
N_FF = 64
N_LAYER = 1
CONTEXT_LENGTH = 32768

FIRST = ['"', "}", "]", "<", "0", "f"]


def vocabulary():
    """Tokens and their types, in id order."""
    tokens = [("</s>", gguf.TokenType.CONTROL), ("<s>", gguf.TokenType.CONTROL)]
    tokens.append(("<unk>", gguf.TokenType.UNKNOWN))
    rest = [chr(c) for c in range(0x21, 0x7F) if chr(c) not in FIRST]
    for char in FIRST + rest + ["\u2581"]:
        tokens.append((char, gguf.TokenType.NORMAL))
    for byte in range(256):
        tokens.append((f"<0x{byte:02X}>", gguf.TokenType.BYTE))
    return tokens


def main(path):
    tokens = vocabulary()
    n_vocab = len(tokens)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("toolgate-tiny-zero")
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("llama")
    writer.add_token_list([text for text, _ in tokens])
    writer.add_token_scores([0.0] * n_vocab)
    writer.add_token_types([kind for _, kind in tokens])
    writer.add_eos_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_unk_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_space_prefix(False)

    def zeros(*shape):
        return np.zeros(shape, dtype=np.float32)

    # numpy shapes are ggml's dimensions reversed.
    writer.add_tensor("token_embd.weight", zeros(n_vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", zeros(N_EMBD))
    writer.add_tensor("output.weight", zeros(n_vocab, N_EMBD))
    for layer in range(N_LAYER):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", zeros(N_EMBD))
        for name in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            writer.add_tensor(f"{block}.{name}.weight", zeros(N_EMBD, N_EMBD))
        writer.add_tensor(f"{block}.ffn_norm.weight", zeros(N_EMBD))
        writer.add_tensor(f"{block}.ffn_gate.weight", zeros(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_up.weight", zeros(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_down.weight", zeros(N_EMBD, N_FF))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tiny_gguf.py OUT.gguf")
    main(sys.argv[1])
