"""Player names: what is refused, which names are the same name, and how suffixes go."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from peer_kit import Peer
from twisted.internet import task

from pisyedili.protocol import names as protocol_names
from pisyedili.protocol.limits import MAX_NAME
from pisyedili.server.people import names
from pisyedili.server.people.session import Session, Sessions

AYSE = "Ay\u015fe"  # Ayşe, NFC
AYSE_NFD = unicodedata.normalize("NFD", AYSE)
AYSE_CYRILLIC = "A\u0443\u015fe"  # Cyrillic у


def fresh() -> Sessions:
    return Sessions(task.Clock(), grace_seconds=10)


def same(a: str, b: str) -> bool:
    return bool(set(names.keys(a)) & set(names.keys(b)))


REFUSED = [
    ("A\x07li", "U+0007", "control"),
    ("A\u200bli", "U+200B ZERO WIDTH SPACE", "formatting"),
    ("A\u200dli", "U+200D ZERO WIDTH JOINER", "formatting"),
    ("Ali\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE", "formatting"),
    ("\u2066Ali", "U+2066 LEFT-TO-RIGHT ISOLATE", "formatting"),
    ("\ufeffAli", "U+FEFF ZERO WIDTH NO-BREAK SPACE", "formatting"),
    ("Al\u00adi", "U+00AD SOFT HYPHEN", "formatting"),
    ("Ali\ud800", "U+D800", "surrogate"),
    ("Ali\u0378", "U+0378", f"Unicode {unicodedata.unidata_version}"),
    ("Ali\ue000", "U+E000", "private-use"),
    ("Ali\U000f0000", "U+F0000", "private-use"),
    ("\u3164", "U+3164 HANGUL FILLER", "invisible"),
    ("Ali\u3164", "U+3164 HANGUL FILLER", "invisible"),
    ("\u115f", "U+115F HANGUL CHOSEONG FILLER", "invisible"),
    ("\u1160", "U+1160 HANGUL JUNGSEONG FILLER", "invisible"),
    ("\uffa0", "U+FFA0 HALFWIDTH HANGUL FILLER", "invisible"),
    ("Ali\ufe0f", "U+FE0F VARIATION SELECTOR-16", "invisible"),
    ("A\u034fli", "U+034F COMBINING GRAPHEME JOINER", "invisible"),
    ("Ali\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A", "formatting"),
    ("\u2800", "U+2800 BRAILLE PATTERN BLANK", "blank-looking"),
    ("Ali\u2800", "U+2800 BRAILLE PATTERN BLANK", "blank-looking"),
    ("Ali\u2028Veli", "U+2028 LINE SEPARATOR", "line break"),
    ("\u0301\u0301", "U+0301 COMBINING ACUTE ACCENT", "start with a combining mark"),
    ("\u0301Ali", "U+0301 COMBINING ACUTE ACCENT", "start with a combining mark"),
    ("Ali \u0301Veli", "U+0301", "a word that starts with a combining mark"),
    ("!!!", "letter or digit", "letter or digit"),
    ("- * -", "letter or digit", "letter or digit"),
    ("\u00a0 \u3000", "blank", "blank"),
    ("\u0958" * MAX_NAME, f"at most {MAX_NAME}", "characters"),  # NFC: two each
]


@pytest.mark.parametrize(("name", "shows", "why"), REFUSED,
                         ids=[ascii(n)[:40] for n, _, _ in REFUSED])
def test_refused_names_say_what_is_wrong(name: str, shows: str, why: str) -> None:
    with pytest.raises(names.BadName) as refused:
        names.accept(name)
    assert shows in str(refused.value) and why in str(refused.value)


def test_names_are_nfc_with_whitespace_tidied() -> None:
    assert names.accept(AYSE_NFD) == AYSE
    assert names.accept("  Mehmet \u00a0\u3000 Ali  ") == "Mehmet Ali"
    assert names.accept("e\u0301") == "\u00e9"
    assert names.accept("Ali \u2764") == "Ali \u2764"  # a symbol may follow a letter
    assert names.accept("\u0928\u092e\u0938\u094d\u0924\u0947") == "नमस्ते"  # inner marks
    assert names.accept("7") == "7"


@pytest.mark.parametrize("pair", [
    (AYSE, "AYŞE"),
    (AYSE, AYSE_CYRILLIC),
    (AYSE, AYSE_NFD),
    (AYSE, "Ay\u0219e"),  # Romanian ș: the table takes the cedilla to a comma below
    ("Ali", "ALI"),
    ("Ali", "AL\u0130"),  # Turkish capitals
    ("I\u015f\u0131k", "I\u015eIK"),  # Işık, IŞIK
    ("I\u015f\u0131k", "l\u015f\u0131k"),  # a capital I passing for an l
    ("Bob", "B0B"),
    ("rn", "m"),
    ("Mehmet", "Mehrnet"),
    ("Bob", "\uff42\uff4f\uff42"),  # fullwidth ｂｏｂ: a width form, folded by NFKD
    ("Ali", "\uff21\uff4c\uff49"),
    ("fina", "\ufb01na"),  # the ligature ﬁ
])
def test_look_alikes_are_one_name(pair: tuple[str, str]) -> None:
    assert same(*pair)


@pytest.mark.parametrize("pair", [
    (AYSE, "Ayse"),  # not confusable in UTS #39's table: ş keeps its cedilla
    ("Mehmet", "Mehmet 2"),
    ("Ali", "Aii"),
    ("Ali", "Veli"),
])
def test_different_names_stay_apart(pair: tuple[str, str]) -> None:
    assert not same(*pair)


@pytest.mark.parametrize("name", [
    "bot (easy)", "Bot (Hard)", "BOT(medium)", "bot  (x)",
    "b\u043et (easy)",  # Cyrillic о
    "b0t (easy)", "b\u00f3t (easy)", "bot\u3000(easy)", "bot \u2768easy\u2769",
    "\uff42ot (easy)", "bot \uff08easy\uff09",  # fullwidth ｂ, fullwidth brackets
    "\uff42\uff4f\uff54",  # ｂｏｔ
    "bot", "Bot", "bot 2", "BOT2", "bot 12", "bot \uff12", "bot 1", "bot 2 (easy)",
    "bot (easy) 2", "\U0001d41b\U0001d428\U0001d42d 3",  # mathematical bold letters
])
def test_bot_names_and_their_look_alikes_are_reserved(name: str) -> None:
    assert names.reserved(names.normalise(name))
    with pytest.raises(names.BadName, match="kept for the server's bots"):
        names.accept(name)


@pytest.mark.parametrize("name", ["robot", "Botan", "botox", "bot Ali", "(bot)", "2 bot"])
def test_names_near_a_bots_are_free(name: str) -> None:
    assert names.accept(name) == name


def test_look_alikes_get_suffixes_judged_on_keys() -> None:
    sessions = fresh()
    conn = Peer()
    assert sessions.open(AYSE, conn).name == AYSE
    assert sessions.open(names.accept(AYSE_CYRILLIC), conn).name == AYSE_CYRILLIC + " 2"
    assert sessions.open("AYŞE", conn).name == "AYŞE 3"
    assert sessions.open("Ayse", conn).name == "Ayse"
    mehmet = sessions.open("Mehmet", conn)
    assert sessions.open("Mehmet 2", conn).name == "Mehmet 2"  # typed so: no clash
    assert sessions.open("Mehrnet", conn).name == "Mehrnet 3"  # 2 is taken, if typed
    assert mehmet.name == "Mehmet"


def test_freed_names_and_suffixes_are_given_out_again() -> None:
    sessions = fresh()
    conn = Peer()
    ann, ann2, ann3 = (sessions.open("Ann", conn) for _ in range(3))
    assert (ann.name, ann2.name, ann3.name) == ("Ann", "Ann 2", "Ann 3")
    sessions.forget(ann2)
    assert sessions.open("ANN", conn).name == "ANN 2"
    assert sessions.open("Ann", conn).name == "Ann 4"
    sessions.forget(ann)
    assert sessions.open("ann", conn).name == "ann"
    for session in sessions.each():
        sessions.forget(session)
    assert not (sessions._by_key or sessions._claims or sessions._next_suffix)


def test_a_suffix_cut_keeps_a_letter_with_its_marks() -> None:
    sessions = fresh()
    name = "x" * (MAX_NAME - 3) + "q\u0301z"  # q with an acute has no precomposed form
    assert names.accept(name) == name and len(name) == MAX_NAME
    sessions.open(name, Peer())
    assert sessions.open(name, Peer()).name == "x" * (MAX_NAME - 3) + " 2"


class NoScan(dict[str, Session]):
    """A registry that fails the test if anything walks all the sessions."""

    def __iter__(self) -> Any:
        raise AssertionError("scanned every session")

    def values(self) -> Any:
        raise AssertionError("scanned every session")


def test_open_looks_names_up_instead_of_scanning() -> None:
    sessions = fresh()
    sessions.open("Ann", Peer())
    sessions._by_token = NoScan(sessions._by_token)  # type: ignore[arg-type, assignment]
    sessions._by_id = NoScan(sessions._by_id)
    assert sessions.open("ANN", Peer()).name == "ANN 2"
    assert sessions.open("Bob", Peer()).name == "Bob"


# -- properties ----------------------------------------------------------------------

INTERESTING = [
    "a", "A", "I", "l", "1", "0", "O", "i", "ı", "İ", "ş", "Ş", "s", "\u0443", "\u043e",
    "\u0301", "\u0327", "\u0307", " ", "\u00a0", "\u3000", "\u200b", "\u3164", "\u2800",
    "(", ")", "b", "o", "t", "m", "r", "n", "ß", "ẞ", "Σ", "ς", "\u0958", "\ufe0f", "7",
]
name_text = st.text(
    st.one_of(st.sampled_from(INTERESTING),
              st.characters(categories=("L", "M", "N", "P", "S", "Zs"))),
    min_size=1, max_size=MAX_NAME,
)


@given(name_text)
def test_normalising_is_idempotent_and_keys_are_stable(raw: str) -> None:
    try:
        name = names.normalise(raw)
    except names.BadName:
        return
    assert names.normalise(name) == name
    assert len(name) <= MAX_NAME
    keys = names.keys(name)
    assert names.keys(unicodedata.normalize("NFD", name)) == keys
    for key in keys:
        assert names.keys(key)[0] == key  # a key is its own key: folding has settled


@given(name_text)
def test_a_suffixed_name_passes_the_rules_too(raw: str) -> None:
    try:
        name = names.accept(raw)
    except names.BadName:
        return
    sessions = fresh()
    sessions.open(name, Peer())
    twin = sessions.open(name, Peer()).name
    assert twin != name and names.accept(twin) == twin
    assert not same(twin, name)


def test_the_client_checks_names_with_the_servers_rules() -> None:
    """The check lives in the protocol package, which clients import: no Twisted."""
    assert names.accept is protocol_names.accept
    with pytest.raises(protocol_names.BadName, match="kept for the server's bots"):
        protocol_names.accept("\uff42ot 2")
