"""The exports feed TRL: two training steps of SFTTrainer and DPOTrainer on each kind.

The models and tokenizers are tiny, randomly initialised and built here (a word-level
tokenizer trained on the export's own text; a one-layer Llama, and a LLaVA with a one-layer
CLIP vision tower for the sets with images), so nothing is downloaded.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from datasets import load_dataset
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (
    CLIPImageProcessor,
    CLIPVisionConfig,
    LlamaConfig,
    LlamaForCausalLM,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
)
from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

from tests.export.conftest import cli

IMAGE = "<image>"
SPECIAL = ["<unk>", "<pad>", "<s>", "<|im_end|>", "<|im_start|>", IMAGE]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }} "
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for p in m['content'] %}"
    "{% if p['type'] == 'image' %}<image>{% else %}{{ p['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<|im_end|>{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant "
    "{% endif %}"
)
"""A chat template that writes each image part as one image token (the processor widens it)."""
PATCHES = 16
"""Image tokens per image: a 32-pixel image in 8-pixel patches."""


def exported(household, tmp_path: Path, kind: str, *more: str) -> Any:
    out = tmp_path / kind
    words = ["export", kind, "--run", "oracle", "--store", str(household.store), "--out", str(out)]
    cli([*words, *more])
    rows = load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    return rows.select(range(4))


def texts_of(rows: Any) -> list[str]:
    columns = [c for c in ("messages", "prompt", "chosen", "rejected") if c in rows.column_names]
    out = []
    for row in rows:
        for message in (m for c in columns for m in row[c]):
            content = message["content"]
            parts = [{"text": content}] if isinstance(content, str) else content
            out += [p["text"] for p in parts if p.get("text")]
    return out


def tokenizer_for(rows: Any) -> PreTrainedTokenizerFast:
    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.train_from_iterator(texts_of(rows), trainers.WordLevelTrainer(special_tokens=SPECIAL))
    return PreTrainedTokenizerFast(
        tokenizer_object=words,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="<|im_end|>",
        chat_template=TEMPLATE,
        extra_special_tokens={"image_token": IMAGE},
    )


def text_config(tokenizer: PreTrainedTokenizerFast) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )


def text_model(rows: Any) -> tuple[Any, Any]:
    tokenizer = tokenizer_for(rows)
    torch.manual_seed(0)
    return LlamaForCausalLM(text_config(tokenizer)), tokenizer


def vision_model(rows: Any) -> tuple[Any, Any]:
    tokenizer = tokenizer_for(rows)
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=TEMPLATE,
        image_token=IMAGE,
        num_additional_image_tokens=1,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=16,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text_config(tokenizer),
        image_token_id=tokenizer.convert_tokens_to_ids(IMAGE),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(0)
    return LlavaForConditionalGeneration(config), processor


def settings(cls: type, tmp_path: Path) -> Any:
    return cls(
        output_dir=str(tmp_path / "train"),
        max_steps=2,
        per_device_train_batch_size=2,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=True,
        disable_tqdm=True,
        max_length=None,
    )


def trained(trainer: Any, model: Any) -> dict[str, Any]:
    """Train, and return the first batch; check two finite steps that moved the weights."""
    before = [p.detach().clone() for p in model.parameters()]
    batch = next(iter(trainer.get_train_dataloader()))
    trainer.train()
    assert trainer.state.global_step == 2
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    return batch


def check_images(batch: dict[str, Any], model: Any) -> None:
    """Four views per sequence reached the vision tower, each as its patches of tokens."""
    images = batch["pixel_values"].shape[0]
    assert images == 4 * batch["input_ids"].shape[0]
    tokens = int((batch["input_ids"] == model.config.image_token_id).sum())
    assert tokens == images * PATCHES


TRAINERS = {"sft": (SFTTrainer, SFTConfig), "dpo": (DPOTrainer, DPOConfig)}


@pytest.mark.parametrize("observation", ["text", "images"])
@pytest.mark.parametrize("kind", ["sft", "dpo"])
def test_trl_trainer_takes_two_steps_on_the_export(household, tmp_path, kind, observation):
    """SFTTrainer on an SFT export, DPOTrainer (with its reference model) on a DPO export."""
    rows = exported(household, tmp_path, kind, "-a", f"observation={observation}")
    build = text_model if observation == "text" else vision_model
    model, processing = build(rows)
    trainer_class, config_class = TRAINERS[kind]
    reference = {"ref_model": copy.deepcopy(model)} if kind == "dpo" else {}
    trainer = trainer_class(
        model=model,
        args=settings(config_class, tmp_path),
        train_dataset=rows,
        processing_class=processing,
        **reference,
    )
    batch = trained(trainer, model)
    if observation == "images":
        check_images(batch, model)
