"""Fine-tuning with TRL: SFT on the expert's answers, then (optionally) DPO on pairs.

As in EMMOE, supervised fine-tuning comes first and preference optimisation refines it. The
loss is on the answer only (each SFT row is split into the request, as the prompt, and the
answer, as the completion). A pretrained base trains LoRA adapters, merged into the weights
afterwards so the server loads a plain model; a scratch model trains every weight. Steps are
counted, never timed, so the same settings train the same model on any machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sortie.core.errors import ParameterError
from sortie.training.bases import Base

Echo = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """How long and how hard to train."""

    sft_steps: int = 120
    dpo_steps: int = 24
    batch: int = 2
    """Rows per step (gradient accumulation of one-row batches: no padding on a CPU)."""
    learning_rate: float = 2e-4
    lora_rank: int = 16
    max_length: int = 2048
    seed: int = 0

    def __post_init__(self) -> None:
        # transformers reads max_steps <= 0 as "train by epochs" (-1) or does nothing (0):
        # neither is a number of steps, and the loop's figures are per step.
        if self.sft_steps < 1:
            raise ParameterError(
                f"training: --sft-steps must be 1 or more (SFT comes first), got {self.sft_steps}"
            )
        if self.dpo_steps < 0:
            raise ParameterError(
                f"training: --dpo-steps must be 0 (no DPO) or more, got {self.dpo_steps}"
            )
        if self.batch < 1 or not self.learning_rate > 0:
            raise ParameterError(
                f"training: --batch must be 1 or more and --learning-rate more than 0, got "
                f"{self.batch} and {self.learning_rate}"
            )


@dataclass(frozen=True, slots=True)
class Trained:
    """What training did: steps taken and the loss of the first and last logged steps."""

    stage: str
    steps: int
    rows: int
    first_loss: float
    last_loss: float


def fine_tune(
    base: Base, rows: Any, settings: TrainSettings, work: Path, echo: Echo
) -> tuple[Any, Trained]:
    """Train ``base`` on the SFT rows' answers; return the merged model and what was done.

    ``echo`` gets a line per logged step.
    """
    trainer = _sft(base, base.model, rows, settings, work / "sft")
    return _run(trainer, "sft", echo)


def prefer(
    tuned: Base, pairs: Any, settings: TrainSettings, work: Path, echo: Echo
) -> tuple[Any, Trained]:
    """Train ``tuned`` (the SFT model) on the DPO pairs; return the merged model and stage."""
    trainer = _dpo(tuned, tuned.model, pairs, settings, work / "dpo")
    return _run(trainer, "dpo", echo)


def _run(trainer: Any, stage: str, echo: Echo) -> tuple[Any, Trained]:
    """Train, echoing each logged loss instead of the trainer's own printout."""
    from transformers import PrinterCallback, TrainerCallback

    class Lines(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if logs and "loss" in logs:
                echo(f"{stage} step {state.global_step}/{state.max_steps}: loss {logs['loss']:.3f}")

    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(Lines())
    trainer.train()
    return _merged(trainer.model), _stage(stage, trainer, len(trainer.train_dataset))


def as_prompt_completion(rows: Any) -> Any:
    """Split each SFT row into its request (prompt) and answer (completion)."""

    def split(row: dict[str, Any]) -> dict[str, Any]:
        return {"prompt": row["messages"][:-1], "completion": row["messages"][-1:]}

    return rows.map(split, remove_columns=rows.column_names)


def _sft(base: Base, model: Any, rows: Any, settings: TrainSettings, out: Path) -> Any:
    """Return an SFT trainer on the rows' answers."""
    from trl import SFTConfig

    data = as_prompt_completion(rows)
    config = SFTConfig(
        **_common(settings, settings.sft_steps, out),
        completion_only_loss=True,
        max_length=settings.max_length,
    )
    trainer = _answer_only_trainer()(
        model=model,
        args=config,
        train_dataset=data,
        processing_class=base.tokenizer,
        peft_config=_lora(settings) if base.lora else None,
    )
    return trainer


def _answer_only_trainer() -> type:
    """Return TRL's SFTTrainer with the loss computed on the answer's positions only.

    TRL's fused head projects every position through the LM head on a CPU (it keeps only
    the answer's on GPUs); Gemma's head is 262,144 words wide, so on a CPU that is most of a
    step. Here the backbone runs on the whole row and the head on the answer's positions:
    the same loss (summed over answer tokens, divided by their count in the batch), at a
    third of the cost. TRL still prepares the rows, the masks, the optimiser and the schedule.
    """
    import torch
    from trl import SFTTrainer

    class AnswerOnlySFT(SFTTrainer):
        def compute_loss(
            self,
            model: Any,
            inputs: Any,
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            causal = _causal(model)
            labels = inputs["labels"][:, 1:]
            hidden = causal.model(
                input_ids=inputs["input_ids"],
                attention_mask=inputs.get("attention_mask"),
                use_cache=False,
            ).last_hidden_state[:, :-1]
            mask = labels != -100
            logits = _capped(causal, causal.get_output_embeddings()(hidden[mask]).float())
            total = torch.nn.functional.cross_entropy(logits, labels[mask], reduction="sum")
            count = mask.sum() if num_items_in_batch is None else num_items_in_batch
            return total / torch.as_tensor(count).clamp(min=1)

    return AnswerOnlySFT


def _dpo(base: Base, model: Any, rows: Any, settings: TrainSettings, out: Path) -> Any:
    """Return a DPO trainer on the pairs, against the model as it is now."""
    import copy

    from trl import DPOConfig

    data = rows.select_columns(["prompt", "chosen", "rejected"])
    config = DPOConfig(**_common(settings, settings.dpo_steps, out), max_length=settings.max_length)
    # With adapters the reference is the model with its adapters off; else a frozen copy.
    reference = None if base.lora else copy.deepcopy(model).eval()
    trainer = _answer_only_dpo()(
        model=model,
        ref_model=reference,
        args=config,
        train_dataset=data,
        processing_class=base.tokenizer,
        peft_config=_lora(settings) if base.lora else None,
    )
    return trainer


def _answer_only_dpo() -> type:
    """Return TRL's DPOTrainer with its loss computed on the answers' positions only.

    DPO's loss (TRL's default: sigmoid, reverse KL) needs each answer's log-probability under
    the model and the reference. TRL's fused head projects every position on a CPU, as in
    SFT (above); here the backbone runs on the whole row and the head on the answer's
    positions: the same log-probabilities and the same loss. TRL still prepares the pairs,
    the masks, the optimiser and the schedule.
    """
    import torch
    from trl import DPOTrainer

    class AnswerOnlyDPO(DPOTrainer):
        def _compute_loss(self, model: Any, inputs: Any, return_outputs: bool) -> Any:
            ours = answer_logps(_causal(model), inputs)
            with torch.no_grad():
                if self.ref_model is not None:
                    theirs = answer_logps(_causal(self.ref_model), inputs)
                else:  # the adapters off: the model as DPO found it
                    with model.disable_adapter():
                        theirs = answer_logps(_causal(model), inputs)
            ratios = ours - theirs
            chosen, rejected = ratios.chunk(2)  # the batch is [chosen, rejected]
            loss = -torch.nn.functional.logsigmoid(self.beta * (chosen - rejected)).mean()
            return (loss, None) if return_outputs else loss

    return AnswerOnlyDPO


def answer_logps(causal: Any, inputs: Any) -> Any:
    """Return each row's summed log-probability of its answer (``completion_mask``) tokens."""
    import torch

    ids = inputs["input_ids"]
    mask = inputs["completion_mask"][:, 1:].bool()
    hidden = causal.model(
        input_ids=ids, attention_mask=inputs.get("attention_mask"), use_cache=False
    ).last_hidden_state[:, :-1]
    logits = _capped(causal, causal.get_output_embeddings()(hidden[mask]).float())
    tokens = logits.log_softmax(-1).gather(-1, ids[:, 1:][mask].unsqueeze(-1)).squeeze(-1)
    rows = torch.arange(ids.shape[0]).unsqueeze(1).expand_as(mask)[mask]
    return torch.zeros(ids.shape[0], dtype=tokens.dtype).index_add(0, rows, tokens)


def _causal(model: Any) -> Any:
    """Return the causal LM inside a PEFT wrapper (its adapters in place), or the model."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _capped(causal: Any, logits: Any) -> Any:
    """Apply the model's final logit soft-capping, if it has one (Gemma 2 does)."""
    import torch

    cap = getattr(causal.config, "final_logit_softcapping", None)
    return torch.tanh(logits / cap) * cap if cap else logits


def _common(settings: TrainSettings, steps: int, out: Path) -> dict[str, Any]:
    return {
        "output_dir": str(out),
        "max_steps": steps,
        "per_device_train_batch_size": 1,
        "gradient_accumulation_steps": settings.batch,
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": "cosine",
        "warmup_steps": max(1, steps // 20),
        "seed": settings.seed,
        "data_seed": settings.seed,
        "logging_steps": max(1, steps // 20),
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": not _has_gpu(),
        "activation_checkpointing": False,  # memory is not short; recomputing costs a fifth
        "disable_tqdm": True,
    }


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _lora(settings: TrainSettings) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=settings.lora_rank,
        lora_alpha=2 * settings.lora_rank,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )


def _merged(model: Any) -> Any:
    """Fold LoRA adapters into the weights; a model without adapters is returned as is."""
    merge = getattr(model, "merge_and_unload", None)
    return merge() if merge is not None else model


def _stage(name: str, trainer: Any, rows: int) -> Trained:
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    first, last = (losses[0], losses[-1]) if losses else (float("nan"), float("nan"))
    return Trained(name, trainer.state.global_step, rows, first, last)


def describe_steps(settings: TrainSettings) -> str:
    """Return the steps to take, in a few words (said before training starts)."""
    dpo = f", then {settings.dpo_steps} DPO steps" if settings.dpo_steps else ""
    return f"{settings.sft_steps} SFT steps of {settings.batch} rows{dpo}"


def describe(stage: Trained) -> str:
    """Return one line saying what a stage did."""
    return (
        f"{stage.stage}: {stage.steps} steps on {stage.rows} rows, "
        f"loss {stage.first_loss:.3f} → {stage.last_loss:.3f}"
    )
