"""Unrelated memories for the retrieval benches: what another owner's assistant might have kept, none of it
about LoCoMo's or bench/memory_set.py's people. Deterministic (a seeded generator over written parts), so a
run can be repeated: `unrelated(n)` is always the same n texts.

Each text is one turn of a conversation between two of NAMES (none of them a LoCoMo speaker), on one of the
everyday subjects below, with a time and a detail, so that the words a question asks about (a painting, a
trip, a class, kids, a job) also appear among the distractors, as they would in a real owner's memories."""

from __future__ import annotations

import random

NAMES = (
    "Priya",
    "Tomasz",
    "Aiko",
    "Bruno",
    "Leila",
    "Marcus",
    "Ingrid",
    "Kofi",
    "Valentina",
    "Ravi",
    "Sven",
    "Fatima",
    "Diego",
    "Hana",
    "Oleg",
    "Chloe",
    "Emeka",
    "Yuki",
    "Rosa",
    "Anders",
)
OPENERS = (
    "I finally",
    "Yesterday I",
    "Last weekend I",
    "This morning I",
    "Next month I plan to",
    "Two weeks ago I",
    "My sister and I",
    "At work we",
    "After dinner I",
    "On Friday I",
)
DOINGS = (
    "fixed the leaking kitchen tap",
    "repainted the garden fence",
    "signed up for a pottery class",
    "started running before work",
    "took the kids to the aquarium",
    "renewed my passport",
    "changed the tyres on the van",
    "tried a new ramen place downtown",
    "cleaned out the garage",
    "booked a dentist appointment",
    "finished a thousand-piece puzzle",
    "planted tomatoes on the balcony",
    "upgraded my laptop's memory",
    "watched a documentary about volcanoes",
    "joined a chess club",
    "visited my grandparents in the countryside",
    "learned to bake sourdough",
    "moved the piano upstairs",
    "sold my old bike online",
    "helped a neighbour with their tax forms",
    "went to a jazz concert",
    "organised the team's quarterly review",
    "adopted a rescue cat",
    "ran a half marathon",
    "rebuilt the bookshelf in the hallway",
    "bought a second-hand kayak",
    "read a novel about lighthouses",
    "switched to a standing desk",
    "took a photography workshop",
    "painted a small watercolour of the harbour",
)
DETAILS = (
    "and it took longer than I expected",
    "which was a lot of fun",
    "but the weather was awful",
    "and I want to do it again soon",
    "though it cost more than planned",
    "with a friend from the gym",
    "and I learned a lot",
    "so the weekend flew by",
    "and the kids loved it",
    "while listening to podcasts",
    "and now I feel much better",
    "but I forgot my umbrella",
    "and met some lovely people",
    "even though I was exhausted",
    "because the old one broke",
)


PLACES = (
    "in Porto",
    "near the old mill",
    "at the community centre",
    "in the city",
    "by the lake",
    "at home",
    "in Rotterdam",
    "at the office",
    "in the mountains",
    "at my cousin's",
    "in Leeds",
    "on the coast",
    "at the library",
    "in Kraków",
    "downtown",
    "in the suburbs",
    "at the market",
    "in Osaka",
    "at the stadium",
    "in Cape Town",
    "near the station",
    "at the school",
    "in Valencia",
    "on the farm",
)


def unrelated(n: int, seed: int = 47) -> list[str]:
    """`n` unrelated memories, "<speaker>: <text>" as LoCoMo's turns are put."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(NAMES)}: {rng.choice(OPENERS)} {rng.choice(DOINGS)} {rng.choice(PLACES)}, {rng.choice(DETAILS)}."
        for _ in range(n)
    ]
