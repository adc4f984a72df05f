"""The long-term memory retrieval set: 200 memories one user told an agent, and 100 questions whose answer is
one of them. Written for this repository's bench (no outside source): 25 kinds of fact, each told about 8
people of the user's life (200 memories), and asked about 4 of them (100 questions), in words that mostly
differ from the fact's, naming whom they ask about but never the answer. Deterministic."""

from __future__ import annotations

from dataclasses import dataclass

WHO = ["my sister", "my manager", "my neighbour", "my son", "my best friend", "my dentist", "my wife", "my uncle"]

# (fact about {who}, with the answer {x}; the question about {who}; the 8 answers, one per person)
KINDS: list[tuple[str, str, list[str]]] = [
    ("{Who} grew up in {x}", "Which city is {who} originally from?",
     ["Porto", "Oslo", "Kyoto", "Nairobi", "Lima", "Hanoi", "Dublin", "Tunis"]),
    ("{Who} loves eating {x}", "What is {who}'s favourite food?",
     ["sushi", "lasagna", "falafel", "pho", "paella", "pierogi", "ramen", "tacos"]),
    ("{Who} plays the {x}", "Which musical instrument does {who} practise?",
     ["cello", "drums", "violin", "banjo", "flute", "harp", "trumpet", "piano"]),
    ("Every weekend {who} goes {x}", "What sport does {who} do?",
     ["rowing", "climbing", "fencing", "surfing", "cycling", "skiing", "sailing", "boxing"]),
    ("{Who} keeps {x} at home", "What pet does {who} have?",
     ["a parrot", "a beagle", "a cat", "a turtle", "a hamster", "a rabbit", "goldfish", "a ferret"]),
    ("{Who} works as {x}", "What is {who}'s job?",
     ["a nurse", "an architect", "a pilot", "a baker", "a plumber", "a lawyer", "a chemist", "a farmer"]),
    ("{Who} is taking evening classes in {x}", "Which foreign language is {who} learning?",
     ["Portuguese", "Japanese", "Swahili", "Norwegian", "Korean", "Greek", "Arabic", "Polish"]),
    ("{Who}'s birthday is in {x}", "When does {who} celebrate getting older?",
     ["March", "June", "September", "December", "January", "April", "August", "November"]),
    ("{Who} always orders {x}", "What does {who} drink at the cafe?",
     ["an oat latte", "green tea", "sparkling water", "an espresso", "hot chocolate", "a chai", "lemonade",
      "a flat white"]),
    ("{Who} is allergic to {x}", "What must {who} avoid because of an allergy?",
     ["peanuts", "shellfish", "pollen", "penicillin", "dust", "latex", "eggs", "wasp stings"]),
    ("{Who} drives {x}", "What car does {who} own?",
     ["a red Fiat", "a grey Volvo", "a white Tesla", "a blue Mini", "a black Jeep", "a green Skoda", "a silver Audi",
      "a yellow Beetle"]),
    ("{Who} is reading {x}", "Which book has {who} got on the nightstand?",
     ["Dune", "Middlemarch", "The Hobbit", "Beloved", "Ulysses", "Emma", "Solaris", "Persuasion"]),
    ("{Who}'s favourite colour is {x}", "Which shade does {who} like best?",
     ["green", "orange", "navy", "yellow", "purple", "teal", "crimson", "beige"]),
    ("{Who} has a phobia of {x}", "What frightens {who}?",
     ["spiders", "heights", "clowns", "flying", "the dark", "snakes", "crowds", "deep water"]),
    ("{Who} supports {x}", "Which football club does {who} cheer for?",
     ["Benfica", "Ajax", "Celtic", "Napoli", "Boca Juniors", "Galatasaray", "Porto FC", "Lyon"]),
    ("{Who} collects {x}", "What is {who}'s hobby collection?",
     ["stamps", "vinyl records", "old coins", "postcards", "teapots", "comic books", "fossils", "keyrings"]),
    ("{Who} studied {x} at university", "What was {who}'s degree subject?",
     ["history", "physics", "law", "medicine", "architecture", "philosophy", "economics", "biology"]),
    ("{Who} takes the {x} to work", "How does {who} commute?",
     ["train", "bus", "ferry", "tram", "bike", "metro", "car", "scooter"]),
    ("{Who}'s wedding anniversary is in {x}", "In which month did {who} get married?",
     ["May", "October", "February", "July", "March", "June", "December", "April"]),
    ("{Who} wants to visit {x} next year", "Where is {who} dreaming of travelling to?",
     ["Iceland", "Patagonia", "Morocco", "Vietnam", "Bhutan", "Greenland", "Namibia", "Tasmania"]),
    ("{Who} is a fan of {x} music", "What kind of music does {who} listen to?",
     ["jazz", "reggae", "opera", "techno", "fado", "bluegrass", "k-pop", "punk"]),
    ("{Who} volunteers at the {x}", "Where does {who} help out for free?",
     ["animal shelter", "food bank", "library", "hospice", "community garden", "school", "museum", "soup kitchen"]),
    ("{Who} recently broke {x}", "Which bone did {who} fracture?",
     ["a wrist", "an ankle", "a collarbone", "a toe", "an elbow", "a rib", "a finger", "a kneecap"]),
    ("{Who} has {x} children", "How many kids does {who} have?",
     ["two", "three", "no", "four", "five", "six", "seven", "eight"]),
    ("{Who} lives on the {x} floor", "Which storey is {who}'s flat on?",
     ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]),
]  # fmt: skip


@dataclass(frozen=True)
class Memory:
    key: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    answer: str  # the key of the memory that answers it


def memories() -> list[Memory]:
    """The 200 memories: every kind of fact, about each of the 8 people."""
    out = []
    for k, (fact, _, answers) in enumerate(KINDS):
        for i, (who, answer) in enumerate(zip(WHO, answers, strict=True)):
            text = fact.format(Who=who[0].upper() + who[1:], who=who, x=answer)
            out.append(Memory(f"k{k:02d}-p{i}", text))
    return out


def questions() -> list[Question]:
    """The 100 questions: every kind, asked about 4 of the 8 people (the answer is never in the question)."""
    out = []
    for k, (_, question, _) in enumerate(KINDS):
        for i in (0, 2, 4, 6):
            out.append(Question(question.format(who=WHO[i]), f"k{k:02d}-p{i}"))
    return out
