import pytest

from sortie.missions.aerial.judge import exact_judge
from sortie.missions.aerial.spec import AnswerKind as K


@pytest.mark.parametrize(
    ("report", "expected", "kind", "match"),
    [
        ("The plate reads kx-427q.", "KX 42 7Q", K.PLATE, True),
        ("plate KX427O", "KX427Q", K.PLATE, False),  # one misread character of six: 83 < 85
        ("plate KX4270Q", "KX427OQ", K.PLATE, True),  # one misread character of seven: 85.7
        ("K", "KX427Q", K.PLATE, False),
        ("I count three cars", "3", K.NUMBER, True),
        ("There are 4 cars, not 3", "3", K.NUMBER, False),  # names another number: a hedge
        ("2, 3 or 4", "3", K.NUMBER, False),
        ("There are 4 cars", "3", K.NUMBER, False),
        ("It is a gray sedan", "grey", K.COLOUR, True),
        ("It is a crimson truck", "red", K.COLOUR, True),
        ("blue", "red", K.COLOUR, False),
        ("not red, it is blue", "red", K.COLOUR, False),
        ("A rhinoceros near the water", "rhino", K.LABEL, True),
        ("a giraffe", "giraffe", K.LABEL, True),
        ("an elephant", "zebra", K.LABEL, False),
        ("The sign says Harbour Bakery", "HARBOUR BAKERY", K.TEXT, True),
        ("The sign says Harbour Bakkery", "HARBOUR BAKERY", K.TEXT, True),
        ("Harbour", "HARBOUR BAKERY", K.TEXT, False),  # part of the answer is not the answer
        ("red", "red brick building", K.TEXT, False),
        ("", "3", K.NUMBER, False),
        (None, "3", K.NUMBER, False),
    ],
)
def test_the_exact_judge_normalises_each_kind(report, expected, kind, match):
    """Numbers as digits or words, plates without spaces or dashes, colour/label synonyms."""
    verdict = exact_judge(report, expected, kind)
    assert verdict.match is match and verdict.judge == "exact"
    assert 0.0 <= verdict.score <= 1.0
