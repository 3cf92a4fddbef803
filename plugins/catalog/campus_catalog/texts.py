"""The catalog's words for the model: tool descriptions and server-instruction fragments.

Descriptions are prompts (seed 000, "When a client calls the tools"): a client's tool search
matches a student's words against them, so each starts with what the tool reads, names the
campus, and has a "Use it for" sentence with questions in a student's words. A rule that
concerns one tool lives in that tool's description, where the model reads it when it loads the
tool. Every campus-specific word comes from the settings (the host's, and the catalog's own
``CatalogSettings``, read through ``campus_rules``: the student system, the time ticket, the
override office and the other registration rules); Wentworth's only on the demo campus.
Claude Code cuts a description after 2,048 characters, so the triggers come first and a test
holds each description under the limit.
"""

from __future__ import annotations

from campus_mcp import InstructionFragment, Settings

from campus_catalog.campus_rules import campus_rules
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.graphql_limits import MAX_COST, MAX_DEPTH
from campus_catalog.schemas import MAX_PAGE_SIZE


def _names(settings: Settings, catalog: CatalogSettings) -> dict[str, str]:
    rules = campus_rules(settings, catalog)
    return {
        "campus": settings.campus_name,
        "short": settings.campus_short_name,
        "office": rules.overrides_from,
        "system": rules.student_system,
        "tz": settings.timezone,
    }


def _banner_hint(catalog: CatalogSettings, system: str) -> str:
    base = catalog.banner_url
    pages = (
        f"{base}/searchResults/getEnrollmentInfo?term=<term uid>&courseReferenceNumber=<crn> (seats and "
        f"waitlist, HTML) and {base}/searchResults/getFacultyMeetingTimes?term=<term uid>&courseReferenceNumber=<crn> "
        "(meeting times, rooms and instructors, JSON)"
        if base
        else "its Banner class search pages searchResults/getEnrollmentInfo and searchResults/getFacultyMeetingTimes "
        "(parameters term=<term uid> and courseReferenceNumber=<crn>)"
    )
    return (
        f"Old data: for a current or future term, when the advisory says the sections data is more than 2 days old "
        f"or has no refresh time, read {system} yourself with a web fetch tool (no sign-in "
        f"needed): {pages}. Banner fails under load: read at most 10 CRNs, one at a time."
    )


def descriptions(settings: Settings, catalog: CatalogSettings) -> dict[str, str]:
    n = _names(settings, catalog)
    rules = campus_rules(settings, catalog)
    campus, short, office, tz = n["campus"], n["short"], n["office"], n["tz"]
    waitlists = rules.waitlists()
    electives = f"Electives not listed yet: {rules.elective_rule}\n" if rules.elective_rule else ""
    return {
        "list_terms": (
            f"Lists the {short} terms (semesters), with the current term and the next term, their "
            "dates, registration windows and parts of term. Call it first: the other catalog tools take its term "
            "uid. Use it for: 'Which term or semester is it now?', 'When does the spring semester start or end?', 'When "
            "does registration open for next term?', 'Is the fall schedule posted yet?' (section_count 0: its "
            "sections are not listed yet). "
            f"Dates are in {tz}."
        ),
        "list_subjects": (
            f"Lists the {short} subjects (COMP, MATH, ...) with their names, school and number of sections in a "
            f"term. Use it for: 'Every department or subject, with its abbreviation', 'What is the subject code (abbreviation) for "
            "mechanical engineering?', 'Which departments have the most classes this spring?'. "
            "Do not use it to find a course by topic: use search_courses."
        ),
        "search_sections": (
            f"Searches the {short} class schedule of one term: sections with their CRNs, meeting days "
            "and times, instructors, campus and open seats; get_section gives one in full (rooms, waitlists, labs). "
            "Use it for: 'Are there open sections of COMP 2350 on Tuesdays and Thursdays?', 'Find me a class "
            "after 10 AM that keeps Fridays free', 'Which sections fit my schedule?', 'Who teaches the Calculus "
            "II sections or labs this spring?', 'Any online or evening HSS electives next term?', 'a class about "
            "the stock market' (q with semantic=true). "
            # Its filters are in its input schema and paging in its output schema (next_offset), each
            # described there. The waitlist rule stays: seed 000 puts it in search_sections too.
            f"Days are Banner letters (R is Thursday); times are {tz}.\n"
            f"{waitlists}\n{electives}"
            "Do not use it for descriptions and prerequisites (get_course)."
        ),
        "get_section": (
            f"Gives one {short} section by CRN, cancelled or not: meeting days and times, rooms, instructors, "
            "seats, waitlist, part of term, campus, cross-listed sections, the linked lecture or lab, and its "
            "final exam. Use it for: 'Is CRN 21345 full or cancelled?', 'What room is CRN 21345 in and when does "
            "it meet?', 'How many seats are left in section 21345, is there a waitlist?', 'When is the final for "
            "CRN 21345?'.\n"
            f"{waitlists}\n{_banner_hint(catalog, n['system'])}"
        ),
        "search_courses": (
            f"Finds {short} catalog courses (not sections) by code ('COMP 2350', or a subject such as 'MATH'), "
            "by title words, or by meaning (semantic=true). Use it for: 'Is there a course on machine learning?', "
            "'Are there courses about a topic I like?', 'What is the course code or number for Statics?', 'a class about the "
            "stock market'. "
            "Then call get_course for prerequisites and details, or search_sections for times and seats."
        ),
        "get_course": (
            f"Gives one {short} catalog course by code: description, credits, prerequisites (a tree of and/or "
            "groups), corequisites, restrictions, mutual exclusions, catalog entry, fees, learning objectives, "
            "the terms it is usually offered, the courses it unlocks, and the current and future terms that have "
            "sections. Use it for: 'What are the prerequisites for COMP 3000?', 'What grade do I need to take MATH "
            "2300?', 'How many credits is COMP 2350, is there a fee?', 'What does it unlock or lead to?', 'Is "
            "Thermodynamics offered in the spring?'.\n"
            "Minimum grades: a prerequisite with min_grade needs at least that grade. The tools do not know the "
            "student's grades, so ask the student for the grade.\n"
            "Overrides: a missing prerequisite or corequisite needs a 'Prerequisite or corequisite' override; a "
            "restriction to other majors or class years needs a 'Major, minor, or program' or 'Class year or "
            f"level' override. {office[0].upper() + office[1:]} gives overrides. An override is not certain: "
            "prefer plans that need none."
        ),
        "list_programs": (
            f"Lists the {short} degree programs (majors) of one catalog year, and the catalog years there are. "
            f"Use it for: 'What majors can I study at {short}?', 'Is there a cybersecurity degree?', 'Which catalog "
            "years are there?'. Then call "
            "degree_requirements with the program's slug. For a catalog year older than those listed, ask the "
            "student for their required courses from their degree audit or program page."
        ),
        "degree_requirements": (
            f"Gives what one {short} degree program requires in one catalog year: each plan of study by "
            "semester, and the elective lists. Use it for: 'What classes do I need to graduate with a computer "
            "science degree?', 'What should I take in my second year of mechanical engineering?', 'Which courses "
            "count as a technical elective for my major?'. Ask the student for their program and catalog year "
            "(usually the year they "
            "started) when you do not know them.\n"
            f"Substitutions and transfer credit: {rules.substitution()}"
        ),
        "list_term_electives": (
            f"Gives the elective lists that the {short} schools published for one term (technical, HSS and other "
            "electives) and the courses on each; their CRNs (include_crns) and each list's full text "
            "(include_full_text) when asked. Use it for: 'What humanities electives are offered next spring?', "
            "'Which technical electives can I take this fall?'. "
            + (
                rules.elective_rule
                or "An elective missing from the schedule may still be added: tell the student to ask their school."
            )
        ),
        "similar_sections": (
            f"Finds {short} sections in the same term like one section: first the same course's open sections "
            "at other times (same_course), then sections of courses that teach something close (by meaning, "
            "else by title words), one per course. Use it for: 'This class is full or I cannot get in, what else is "
            "similar?', 'Something like CRN 21345 at another time?', 'alternatives to this section'."
        ),
        "check_schedule": (
            f"Checks a {short} schedule plan, a list of CRNs in one term: each time conflict with both sections, "
            "the days, the times and the minutes of overlap; lecture and lab pairs (a lecture missing its lab is "
            "flagged, with the CRNs that would complete it); the same course twice; full sections; and totals "
            "(credits, hours a week, days on campus). Use it for: 'Do these CRNs conflict or overlap?', 'Check my "
            "schedule: 21345, 21346, 21888', 'Does my lecture have its lab?', 'How many credits is this plan?'. "
            "Check every option before you "
            "give a plan to the student. For a signed-in student it knows their own sections (no override for "
            "one they hold) and checks prerequisites against their record.\n"
            f"Overrides: {office} gives registration overrides, and an override is not certain, so prefer plans "
            "that need none. The result names the override each problem needs: 'Time conflict' for overlapping "
            "sections (give the minutes of overlap), 'Capacity or closed' for a full section (join its waitlist "
            "first when it has one). Others: 'Prerequisite or corequisite', 'Major, minor, or program', 'Class "
            "year or level', 'Instructor or department approval', 'Maximum hours (ADV_MAX_HR)' for more credits "
            "than the term maximum. Offer an option that needs an override only when no plan without one works "
            "or the student is stuck; then name the override and the course, and tell the student to ask "
            f"{office}."
        ),
        "search_instructors": (
            f"Finds {short} instructors (professors) by name, by the subject they teach in a term, or by what "
            "they teach (semantic=true), with their RateMyProfessor rating. Use it for: 'Find or look up professor "
            "Smith', 'Who teaches COMP classes this spring?', 'Which professors teach machine learning here?'. "
            "Then call "
            "get_instructor with the pub_id."
        ),
        "get_instructor": (
            f"Gives one {short} instructor (professor): RateMyProfessor ratings, the rating distribution, tags, "
            "the most recent reviews, and their sections in a term. Use it for: 'Is Professor Smith good, what is "
            "her rating?', 'What sections does my professor teach this term?', 'How hard is Dr. Lee?'. Ratings "
            "come from "
            f"RateMyProfessor, not from {short}; a few reviews say little."
        ),
        "similar_instructors": (
            f"Finds {short} instructors who teach something close to one instructor (by meaning, else by the "
            "subjects they share). Use it for: 'Who else teaches what Professor Smith teaches?', 'another "
            "instructor like Dr. Lee'."
        ),
        "search_reviews": (
            f"Searches RateMyProfessor reviews of {short} instructors by instructor, course, words, meaning "
            "(semantic=true finds reviews that say the thing in other words), or sentiment (positive: praise, "
            "negative: complaints). Use it for: 'What do students say about Professor Smith's exams or workload?', "
            "'reviews of COMP 2350', 'Which professors are praised for clear lectures, or are tough graders?', "
            "'complaints about unfair exams'. Reviews "
            "are the opinions of a few students."
        ),
        "university_events": (
            f"Lists the {short} academic calendar between two dates (default: the next 180 days): "
            "holidays and breaks, deadlines (add/drop, withdrawal), registration dates, term dates and finals "
            "week. Use it for: 'When is spring break?', 'When is finals week?', 'What is the last day to drop or "
            f"withdraw from a class?', 'Is there class on Monday or on a holiday such as Thanksgiving?'. Dates "
            f"are in {tz}.\n"
            f"Registration time: {rules.registration_long()}"
        ),
        "catalog_graphql": (
            f"Runs a read-only GraphQL query on the public course catalog of {campus}: the same data as the other "
            "catalog tools, in one round trip, with only the fields you select. Use it for: questions that join "
            'several lookups, such as "the CRN, days and instructor of every open COMP section this term" or "the '
            'prerequisites of each course in my plan". Fields: terms, subjects, sections, section, courses, course, '
            "scheduleCheck, instructors, instructor, reviews; arguments and nested field names are those of the "
            f"matching tools. Limits: at most {MAX_DEPTH} levels deep, a cost of {MAX_COST} fields (a field counts "
            f"once per item of its page), pages of at most {MAX_PAGE_SIZE}, and one search by meaning "
            "(semantic: true) per query. Mutations are refused. Not for one simple lookup: search_sections, "
            "get_course and the other tools are easier and carry the advisory."
        ),
    }


def instruction_fragments(settings: Settings, catalog: CatalogSettings) -> list[InstructionFragment]:
    n = _names(settings, catalog)
    rules = campus_rules(settings, catalog)
    return [
        InstructionFragment(
            priority=10,
            text=(
                f"Use this server for {n['campus']} ({n['short']}) courses and registration: class schedule, "
                "sections and CRNs, open seats, course descriptions and prerequisites, professors and reviews, "
                "degree requirements, electives, academic calendar (breaks, deadlines, finals). Students "
                "say 'my professor', 'is this class full', 'when is spring break', 'what to take next "
                "term'."
            ),
        ),
        # The rules stay short: every plugin's rules share what is left of the 2,048 characters. Seed
        # 000 puts three in the instructions: the advisory with its freshness, the time ticket and the
        # RAC ("Registration steps"), and the override rules; the RAC is the demo campus's rule only.
        InstructionFragment(
            priority=50,
            text=(
                "Planning results carry an advisory: tell the student to confirm plans with their program "
                "director and advisor. A refresh time there is when a full run ended, not one "
                "course: one fresh course says nothing of the rest."
            ),
        ),
        InstructionFragment(priority=55, text=rules.registration_short()),
        InstructionFragment(
            priority=60,
            text=(
                f"Overrides (from {n['office']}) are never certain: plan without; offer one as a last resort, "
                "naming it, the course and any minutes of conflict."
            ),
        ),
    ]
