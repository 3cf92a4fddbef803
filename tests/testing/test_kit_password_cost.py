"""The kit hashes and verifies test passwords with argon2id at its lowest cost (campus_mcp.testing).

A sign-in at the deployment's cost is ~0.35 s of CPU; the suite's sign-ins only need the answer.
Either cost verifies the other's hashes, since an argon2 hash carries its parameters: a password
set by a `campus-mcp serve` subprocess (the deployment's hasher) signs in from the test process.
"""

from __future__ import annotations

from argon2 import PasswordHasher
from campus_mcp.oauth import accounts
from campus_mcp.oauth.accounts import authenticate, create_local_student, student_by_username
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.kit import TEST_PASSWORD_HASHER


async def test_a_test_process_hashes_at_the_lowest_argon2id_cost_and_still_checks_the_password(
    campus_factory: CampusFactory,
) -> None:
    assert accounts.password_hasher is TEST_PASSWORD_HASHER
    campus = await campus_factory(plugins=[])
    async with campus.sessions() as session, session.begin():
        await create_local_student(session, "grace", "cobol-1959")
    async with campus.sessions() as session:
        student = await student_by_username(session, "grace")
        assert student is not None and student.password_hash is not None
        assert student.password_hash.startswith("$argon2id$v=19$m=8,t=1,p=1$")
        assert await authenticate(session, campus.settings, "grace", "cobol-1959") is not None
        assert await authenticate(session, campus.settings, "grace", "cobol-1960") is None


async def test_a_password_hashed_at_the_deployments_cost_signs_in(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[])
    deployment_hash = PasswordHasher().hash("fortran-1957")
    assert deployment_hash.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    async with campus.sessions() as session, session.begin():
        student = await create_local_student(session, "john", "placeholder")
        student.password_hash = deployment_hash
    async with campus.sessions() as session:
        assert await authenticate(session, campus.settings, "john", "fortran-1957") is not None
        assert await authenticate(session, campus.settings, "john", "fortran-1958") is None
