"""``sortie train homiebot`` at toy size, through the real server, and its guard rails.

The toy pipeline is the real one with small numbers: the oracle plays eight train tasks (the
eighth holds one of its re-plans, a DPO pair), the export gives SFT and DPO rows, a one-layer
model built from scratch (``scratch-tiny``) takes a few SFT steps, plays one train task for
pairs of its own, takes a few DPO steps, ``transformers serve`` serves the three models on
loopback, and homiebot plays one test task against each. The model learns nothing in four
steps; what is checked is that every stage ran, that the server was really asked, and that a
second call resumes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from safetensors.torch import load_file

from sortie.core.errors import ConfigError
from sortie.report.usage import run_usage
from sortie.run.store import Store
from sortie.training.bases import CHAT_TEMPLATE, load_base
from sortie.training.data import TEST_SUITE, check_held_out, train_tasks
from sortie.training.finetune import TrainSettings
from sortie.training.loop import LoopSettings, run_loop
from tests.export.conftest import cli

# Under pytest -n one process runs this module: its fixture (the toy loop, a minute) is made once.
pytestmark = pytest.mark.xdist_group(__name__)

TOY = [
    "train",
    "homiebot",
    "--base",
    "scratch-tiny",
    "--sft-steps",
    "4",
    "--dpo-steps",
    "2",
    "--train-tasks",
    "8",
    "--own-tasks",
    "1",
    "--test-tasks",
    "1",
    "--repeats",
    "1",
]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("train") / "loop"
    return out, cli([*TOY, "--out", str(out)])


def test_the_toy_loop_trains_serves_and_scores_the_three_models(toy):
    out, output = toy
    zero, tuned = "homiebot-scratch-tiny-zero-shot", "homiebot-scratch-tiny-fine-tuned"
    preferred = f"{tuned}-dpo"
    assert all(run_id in output for run_id in (zero, tuned, preferred))
    assert output.count("(paired)") == 2
    training = json.loads((out / "training.json").read_text())
    assert [(s["stage"], s["steps"]) for s in training["stages"]] == [("sft", 4), ("dpo", 2)]
    assert all(math.isfinite(s["last_loss"]) for s in training["stages"])
    assert training["tasks"] == list(train_tasks(8)) and training["dpo_pairs"] >= 1
    weights = {
        folder: load_file(out / "models" / folder / "model.safetensors")
        for folder in ("base", "tuned", "dpo")
    }
    for before, after in (("base", "tuned"), ("tuned", "dpo")):
        assert any(not weights[before][k].equal(weights[after][k]) for k in weights[before])
    with Store(out / "data" / "own.db") as store:  # the SFT model played a train task
        assert [e.episode_id for e in store.episodes("sft-own")] == list(train_tasks(1))
    with Store(out / "results.db") as store:
        usage = run_usage(store, [zero, tuned, preferred])
        for run_id, folder in ((zero, "base"), (tuned, "tuned"), (preferred, "dpo")):
            assert store.run_config(run_id).agent.args["model"] == str(
                (out / "models" / folder).resolve()
            )
    # Every episode asked the real server; the untrained models answer nothing readable.
    assert all(u.calls >= 1 for u in usage.values()), usage


def test_a_second_call_resumes_without_training_or_playing_again(toy):
    out, _ = toy
    stamp = (out / "models" / "tuned" / "model.safetensors").stat().st_mtime_ns
    output = cli([*TOY, "--out", str(out)])
    assert "models already trained" in output
    assert "every episode already played" in output and "starting transformers serve" not in output
    assert (out / "models" / "tuned" / "model.safetensors").stat().st_mtime_ns == stamp
    with Store(out / "results.db") as store:
        assert len(store.episodes("homiebot-scratch-tiny-fine-tuned")) == 1


def test_other_settings_in_the_same_folder_are_refused(toy):
    out, _ = toy
    output = cli([*TOY, "--out", str(out), "--sft-steps", "5"], code=2)
    assert "made with other settings (train differ)" in " ".join(output.split())


def test_only_homiebot_and_navigator_can_be_trained(tmp_path):
    """An agent that cannot be trained is refused by the train group."""
    output = cli(["train", "oracle", "--out", str(tmp_path / "x")], code=2)
    assert "No such command 'oracle'" in output


def rows_of(episode_id: str, text: str) -> list[dict[str, object]]:
    message = {"role": "user", "content": f"Task: {text}"}
    return [{"episode_id": episode_id, "messages": [message]}]


def test_rows_of_test_tasks_are_refused():
    assert check_held_out(rows_of("household-v1/0001", "tidy up")) == 1
    with pytest.raises(ConfigError, match="household-v1/0091.*not a train task"):
        check_held_out(rows_of("household-v1/0091", "tidy up"))


def test_rows_quoting_a_test_instruction_are_refused():
    from sortie.missions.household.spec import household_task
    from sortie.missions.loading import load_suite

    test = load_suite(TEST_SUITE).episodes[3]
    instruction = household_task(test).instruction
    with pytest.raises(ConfigError, match=f"quotes the instruction of test task {test.episode_id}"):
        check_held_out(rows_of("household-v1/0001", instruction))


def test_train_tasks_leave_out_those_that_share_a_test_instruction():
    # household-v1/0033 reads as test task 0094; /0080 is 0100 with a greeting around it.
    tasks = train_tasks()
    assert len(tasks) == 88 and tasks[0] == "household-v1/0001" and tasks[-1] == "household-v1/0090"
    assert "household-v1/0033" not in tasks and "household-v1/0080" not in tasks


def test_the_chat_template_puts_the_system_text_in_the_first_turn_and_prompts_a_reply():
    base = load_base("scratch-tiny", ["go_to table_0", "pick cup_0"], seed=0)
    assert base.tokenizer.chat_template == CHAT_TEMPLATE
    messages = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Task: tidy."},
        {"role": "assistant", "content": '{"action": "end"}'},
    ]
    prompt = base.tokenizer.apply_chat_template(
        messages[:2], tokenize=False, add_generation_prompt=True
    )
    full = base.tokenizer.apply_chat_template(messages, tokenize=False)
    assert (
        prompt
        == "<bos><start_of_turn>user\nRules.\n\nTask: tidy.<end_of_turn>\n<start_of_turn>model\n"
    )
    assert full == prompt + '{"action": "end"}<end_of_turn>\n'


def test_an_unknown_base_is_refused_with_the_choices(tmp_path):
    settings = LoopSettings(
        base=str(tmp_path / "nothing"), train=TrainSettings(sft_steps=1), train_tasks=1
    )
    with pytest.raises(ConfigError, match="expected gemma-3-270m, scratch, scratch-tiny"):
        run_loop(settings, tmp_path / "out", lambda line: None)


def test_the_answer_only_loss_equals_the_models_own_loss_on_the_answer(tmp_path):
    """Projecting only the answer's positions gives the causal LM loss over the answer."""
    import torch
    from datasets import Dataset

    from sortie.training.finetune import _answer_only_trainer, as_prompt_completion

    rows = Dataset.from_list(
        [
            {
                "messages": [
                    {"role": "system", "content": "Plan."},
                    {"role": "user", "content": "Task: put the cup_0 on the table_0."},
                    {"role": "assistant", "content": '{"action": "go_to", "target": "cup_0"}'},
                ]
            }
        ]
    )
    base = load_base("scratch-tiny", [m["content"] for m in rows[0]["messages"]], seed=0)
    trainer = _answer_only_trainer()(
        model=base.model,
        args=_config(tmp_path),
        train_dataset=as_prompt_completion(rows),
        processing_class=base.tokenizer,
    )
    batch = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    answer = int((batch["labels"] != -100).sum())
    assert 10 < answer < batch["labels"].shape[1] // 2  # the answer only, not the request
    with torch.no_grad():
        ours = trainer.compute_loss(base.model, batch)
        own = base.model(input_ids=batch["input_ids"], labels=batch["labels"]).loss
    assert torch.allclose(ours, own, rtol=1e-5)


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_the_answer_only_dpo_loss_equals_trls_own(tmp_path, lora):
    """The head on the answers' positions only gives TRL's DPO loss, with either reference."""
    import copy

    import torch
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    from sortie.training.finetune import (
        TrainSettings,
        _answer_only_dpo,
        _causal,
        _lora,
        answer_logps,
    )

    prompt = [
        {"role": "system", "content": "Plan."},
        {"role": "user", "content": "Task: put the cup_0 on the table_0."},
    ]
    pairs = Dataset.from_list(
        [
            {
                "prompt": prompt,
                "chosen": [{"role": "assistant", "content": '{"action": "go_to"}'}],
                "rejected": [{"role": "assistant", "content": '{"action": "pick", "x": 1}'}],
            }
        ]
    )
    texts = [m["content"] for m in prompt] + ['{"action": "go_to"}', '{"action": "pick"}']
    base = load_base("scratch-tiny", texts, seed=0)
    config = DPOConfig(output_dir=str(tmp_path), max_steps=1, report_to=[], use_cpu=True)
    made = {}
    for name, kind in (("ours", _answer_only_dpo()), ("trl", DPOTrainer)):
        torch.manual_seed(0)
        made[name] = kind(
            model=copy.deepcopy(base.model),
            ref_model=None if lora else copy.deepcopy(base.model),
            args=config,
            train_dataset=pairs,
            processing_class=base.tokenizer,
            peft_config=_lora(TrainSettings()) if lora else None,
        )
    for trainer in made.values():  # move the policy off the reference, the same way in both
        with torch.no_grad():
            for param in trainer.model.parameters():
                if param.requires_grad:
                    param.add_(torch.sin(torch.arange(param.numel()).reshape(param.shape)) / 10)
    batch = made["trl"]._prepare_inputs(next(iter(made["trl"].get_train_dataloader())))
    with torch.no_grad():
        ours = made["ours"].compute_loss(made["ours"].model, batch)
        theirs = made["trl"].compute_loss(made["trl"].model, batch)
        # Each answer's log-probability is the model's own, from its full logits.
        policy = made["ours"].model
        logits = policy(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        every = logits.logits[:, :-1].log_softmax(-1)
        tokens = every.gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
        own = (tokens * batch["completion_mask"][:, 1:]).sum(1)
        assert torch.allclose(answer_logps(_causal(policy), batch), own, rtol=1e-6)
    assert not torch.isclose(theirs, torch.tensor(0.6931), atol=1e-3)  # the policy moved
    # TRL's fused head on a CPU differs in the fourth digit (it gives the reference's
    # log-probabilities 1e-3 away from the reference's own logits).
    assert torch.allclose(ours, theirs, rtol=1e-3)


def _config(folder: Path):
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(folder),
        max_steps=1,
        per_device_train_batch_size=1,
        report_to=[],
        use_cpu=True,
        completion_only_loss=True,
        activation_checkpointing=False,
    )


def test_the_server_stops_when_the_sortie_process_is_killed(toy):
    """A killed pipeline leaves no model server behind (its block's finally never runs)."""
    import subprocess
    import sys
    import time
    import urllib.request

    out, _ = toy
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from sortie.training.server import served\n"
        f"with served(Path({str(out / 'models' / 'base')!r}), Path({str(out / 'kill.log')!r})) "
        "as server:\n"
        "    print(server.base_url, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert parent.returncode == -9
    health = parent.stdout.strip().removesuffix("/v1") + "/health"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(health, timeout=1).close()
        except OSError:
            return  # nothing answers: the server went with its parent
        time.sleep(0.5)
    raise AssertionError(f"{health} still answers 30 s after its parent was killed")
