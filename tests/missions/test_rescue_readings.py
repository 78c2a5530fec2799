from sortie.metrics.rescue import METRICS
from sortie.missions.rescue.family import RESCUE
from sortie.report.tables import column_sources, reading_set

STAGES = ("ts", "s1", "s2", "s3", "s4")


def test_every_column_a_rescue_reading_reads_is_a_metric_the_scorer_stores():
    """No variant reads a metric score_rescue does not return."""
    read = {source for r in RESCUE.readings for v in r.variants.values() for source in v.values()}
    assert read and read <= set(METRICS)


def test_the_seed_readings_are_rescuebenchs_code_with_its_targets_and_r4rs_sdtw():
    """--readings seed reads TS and S1–S4 from *_code_placement and SDTW from sdtw_r4r."""
    sources = column_sources([*STAGES, "sdtw", "hs"], reading_set("rescue", "seed"))
    assert sources == {**{c: f"{c}_code_placement" for c in STAGES}, "sdtw": "sdtw_r4r", "hs": "hs"}


def test_the_paper_fork_variant_reads_the_fork_scores():
    """--variant ts=paper-fork reads TS and S1–S4 from ts_fork and s1_fork … s4_fork."""
    sources = column_sources(STAGES, {"ts": "paper-fork"})
    assert sources == {c: f"{c}_fork" for c in STAGES}
