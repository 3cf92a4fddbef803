"""The demo campus's ten degree programs: a plan of study by semester and the elective lists.

A slot that is not a course code ("HSS Elective") is an elective slot; the generator stores it
with ``code`` null, as the catalog import does.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class DemoProgram:
    slug: str
    name: str
    school: str
    degree: str
    semesters: tuple[tuple[str, tuple[str, ...]], ...]
    electives: tuple[tuple[str, tuple[str, ...], str | None], ...]


def _years(*terms: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    labels = [f"Year {y} {s}" for y in range(1, 5) for s in ("Fall", "Spring")]
    return tuple(zip(labels, terms, strict=True))


HSS = ("HSS Elective",)
HSS_LIST = (
    "Humanities and Social Sciences Electives",
    (
        "ECON 1100",
        "ECON 1200",
        "HIST 1100",
        "HIST 2100",
        "PSYC 1100",
        "PHIL 1100",
        "PHIL 2100",
        "SOCL 1100",
        "COMM 1100",
        "ARTS 2400",
    ),
    "Any course with the HSS attribute counts; at most two at the 1000 level.",
)

PROGRAMS = (
    DemoProgram(
        "bs-computer-science",
        "Computer Science",
        "computing",
        "Bachelor of Science",
        _years(
            ("COMP 1000", "MATH 1750", "ENGL 1100", "ENGR 1000"),
            ("COMP 1050", "MATH 1850", "ENGL 1500", "MATH 2100"),
            ("COMP 2000", "COMP 2100", "PHYS 1250", "HSS Elective"),
            ("COMP 2350", "MATH 2300", "PHYS 1750", "HSS Elective"),
            ("COMP 3000", "COMP 3450", "MATH 3100", "HSS Elective"),
            ("COMP 3500", "Technical Elective", "ENGL 2200", "HSS Elective"),
            ("COMP 4100", "COMP 4960", "Technical Elective", "HSS Elective"),
            ("Technical Elective", "Technical Elective", "PHIL 2400", "Free Elective"),
        ),
        (HSS_LIST, ("Technical Electives", ("DATA 3100", "DATA 4200", "CYBR 2200", "CYBR 3300", "COMP 4100"), None)),
    ),
    DemoProgram(
        "bs-data-science",
        "Data Science",
        "computing",
        "Bachelor of Science",
        _years(
            ("DATA 1000", "COMP 1000", "MATH 1750", "ENGL 1100"),
            ("COMP 1050", "MATH 1850", "DATA 2000", "ENGL 1500"),
            ("DATA 2500", "MATH 2300", "COMP 2000", "HSS Elective"),
            ("COMP 2350", "MATH 3100", "ECON 1100", "HSS Elective"),
            ("DATA 3100", "DATA 3300", "HSS Elective", "Technical Elective"),
            ("COMP 4100", "ENGL 2200", "HSS Elective", "Free Elective"),
            ("DATA 4200", "DATA 4900", "PHIL 2400", "Technical Elective"),
            ("Technical Elective", "HSS Elective", "Free Elective", "Free Elective"),
        ),
        (HSS_LIST, ("Technical Electives", ("COMP 3000", "COMP 3450", "CYBR 1100", "FINC 3300", "MKTG 3300"), None)),
    ),
    DemoProgram(
        "bs-cybersecurity",
        "Cybersecurity",
        "computing",
        "Bachelor of Science",
        _years(
            ("CYBR 1100", "COMP 1000", "MATH 1750", "ENGL 1100"),
            ("COMP 1050", "MATH 2100", "ENGL 1500", "HSS Elective"),
            ("CYBR 2200", "COMP 2000", "COMP 2100", "HSS Elective"),
            ("CYBR 2500", "COMP 2350", "MATH 3100", "HSS Elective"),
            ("CYBR 3300", "COMP 3500", "Technical Elective", "HSS Elective"),
            ("CYBR 3600", "ENGL 2200", "Technical Elective", "Free Elective"),
            ("CYBR 4500", "PHIL 2400", "Technical Elective", "Free Elective"),
            ("COMP 4960", "HSS Elective", "Free Elective", "Free Elective"),
        ),
        (HSS_LIST, ("Technical Electives", ("COMP 3450", "COMP 4100", "DATA 3100", "ELEC 3150"), None)),
    ),
    DemoProgram(
        "bs-electrical-engineering",
        "Electrical Engineering",
        "engineering",
        "Bachelor of Science",
        _years(
            ("ENGR 1000", "MATH 1750", "PHYS 1250", "ENGL 1100"),
            ("ENGR 1500", "MATH 1850", "PHYS 1750", "ENGL 1500"),
            ("ELEC 1100", "MATH 2500", "CHEM 1100", "HSS Elective"),
            ("ELEC 2100", "ELEC 2250", "MATH 2860", "HSS Elective"),
            ("ELEC 3150", "ELEC 3300", "MATH 2300", "HSS Elective"),
            ("ELEC 3700", "ENGR 2000", "Engineering Elective", "HSS Elective"),
            ("ELEC 4400", "ENGR 3000", "Engineering Elective", "HSS Elective"),
            ("Engineering Elective", "Engineering Elective", "ENGL 2200", "Free Elective"),
        ),
        (
            HSS_LIST,
            (
                "Engineering Electives",
                ("MECH 4300", "COMP 4100", "BMED 3100", "CIVE 3500"),
                "Two must be ELEC courses.",
            ),
        ),
    ),
    DemoProgram(
        "bs-mechanical-engineering",
        "Mechanical Engineering",
        "engineering",
        "Bachelor of Science",
        _years(
            ("ENGR 1000", "MATH 1750", "PHYS 1250", "ENGL 1100"),
            ("MECH 1000", "MATH 1850", "PHYS 1750", "ENGL 1500"),
            ("MECH 2200", "MATH 2500", "CHEM 1100", "HSS Elective"),
            ("MECH 2500", "CIVE 2300", "MATH 2860", "HSS Elective"),
            ("MECH 3000", "MECH 3200", "ENGR 1500", "HSS Elective"),
            ("MECH 3400", "ENGR 2000", "Engineering Elective", "HSS Elective"),
            ("MECH 4300", "ENGR 3000", "Engineering Elective", "HSS Elective"),
            ("Engineering Elective", "ELEC 1100", "ENGL 2200", "Free Elective"),
        ),
        (HSS_LIST, ("Engineering Electives", ("ELEC 3150", "BMED 2500", "CIVE 3100", "ELEC 3700"), None)),
    ),
    DemoProgram(
        "bs-civil-engineering",
        "Civil Engineering",
        "engineering",
        "Bachelor of Science",
        _years(
            ("ENGR 1000", "MATH 1750", "PHYS 1250", "ENGL 1100"),
            ("CIVE 2000", "MATH 1850", "PHYS 1750", "ENGL 1500"),
            ("MECH 2200", "MATH 2500", "CHEM 1100", "HSS Elective"),
            ("CIVE 2300", "MATH 2860", "CHEM 2500", "HSS Elective"),
            ("CIVE 3100", "CIVE 3300", "ENGR 2000", "HSS Elective"),
            ("CIVE 3500", "CONM 2500", "Engineering Elective", "HSS Elective"),
            ("CIVE 4200", "ENGR 3000", "Engineering Elective", "HSS Elective"),
            ("Engineering Elective", "CONM 3500", "ENGL 2200", "Free Elective"),
        ),
        (HSS_LIST, ("Engineering Electives", ("ARCH 4000", "MECH 3200", "CONM 3000", "ELEC 3700"), None)),
    ),
    DemoProgram(
        "bs-biomedical-engineering",
        "Biomedical Engineering",
        "engineering",
        "Bachelor of Science",
        _years(
            ("BMED 1000", "MATH 1750", "CHEM 1100", "ENGL 1100"),
            ("BIOL 1100", "MATH 1850", "PHYS 1250", "ENGL 1500"),
            ("BIOL 1200", "PHYS 1750", "MATH 2860", "HSS Elective"),
            ("BMED 2500", "ELEC 1100", "CHEM 1200", "HSS Elective"),
            ("BMED 3100", "BMED 3300", "MATH 3100", "HSS Elective"),
            ("ENGR 1500", "BIOL 2100", "Engineering Elective", "HSS Elective"),
            ("BMED 4100", "ENGR 3000", "Engineering Elective", "HSS Elective"),
            ("Engineering Elective", "ENGL 2200", "PSYC 1100", "Free Elective"),
        ),
        (HSS_LIST, ("Engineering Electives", ("ELEC 3150", "MECH 3200", "BIOL 2300", "DATA 2000"), None)),
    ),
    DemoProgram(
        "barch-architecture",
        "Architecture",
        "design",
        "Bachelor of Science in Architecture",
        _years(
            ("ARCH 1000", "ARCH 1500", "MATH 1000", "ENGL 1100"),
            ("ARCH 2000", "ARTS 1100", "PHYS 1250", "ENGL 1500"),
            ("ARCH 2600", "ARCH 3500", "HSS Elective", "Free Elective"),
            ("ARCH 3000", "CIVE 2300", "HSS Elective", "Free Elective"),
            ("ARCH 4000", "CONM 1000", "HSS Elective", "Free Elective"),
            ("ARCH 3000", "INTD 3400", "HSS Elective", "Free Elective"),
            ("ARCH 4000", "HIST 2100", "HSS Elective", "Free Elective"),
            ("ARCH 3500", "SOCL 2200", "HSS Elective", "Free Elective"),
        ),
        (HSS_LIST,),
    ),
    DemoProgram(
        "bs-industrial-design",
        "Industrial Design",
        "design",
        "Bachelor of Industrial Design",
        _years(
            ("INDS 1000", "COMD 1000", "MATH 1000", "ENGL 1100"),
            ("ARTS 1100", "MECH 1000", "PHYS 1250", "ENGL 1500"),
            ("INDS 2100", "INDS 2500", "HSS Elective", "Free Elective"),
            ("INDS 3000", "COMD 2500", "HSS Elective", "Free Elective"),
            ("INDS 3300", "MKTG 2000", "HSS Elective", "Free Elective"),
            ("INDS 3000", "MGMT 3000", "HSS Elective", "Free Elective"),
            ("ARCH 3500", "PSYC 2500", "HSS Elective", "Free Elective"),
            ("INDS 3300", "ENGL 2200", "HSS Elective", "Free Elective"),
        ),
        (HSS_LIST,),
    ),
    DemoProgram(
        "bs-business-management",
        "Business Management",
        "management",
        "Bachelor of Science",
        _years(
            ("MGMT 1000", "MATH 1000", "ENGL 1100", "ECON 1100"),
            ("ACCT 2000", "ECON 1200", "ENGL 1500", "COMP 1000"),
            ("MGMT 2100", "FINC 2500", "MKTG 2000", "HSS Elective"),
            ("ACCT 2100", "MGMT 2500", "MATH 3100", "HSS Elective"),
            ("FINC 3300", "MGMT 3300", "Business Elective", "HSS Elective"),
            ("MKTG 3000", "MGMT 3000", "Business Elective", "HSS Elective"),
            ("MGMT 4000", "FINC 3500", "Business Elective", "HSS Elective"),
            ("Business Elective", "COMM 1100", "Free Elective", "Free Elective"),
        ),
        (
            HSS_LIST,
            (
                "Business Electives",
                ("FINC 2000", "FINC 4100", "ACCT 3000", "ACCT 3500", "MKTG 2500", "MKTG 3300", "DATA 2500"),
                None,
            ),
        ),
    ),
)
