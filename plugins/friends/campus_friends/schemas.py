"""What the friends tools and their REST twins take and give: one set of models for both.

A friend's busy time is a start and an end and nothing else: no course code, title, CRN, room,
instructor or meeting title, and not even whether it is a class, a final or a meeting (that alone
says when someone's finals are). The answer for one friend is built only from these models, so a
field that is not here cannot leak.
"""

from __future__ import annotations

from datetime import date, datetime

from campus_schedule.busy import MAX_DAYS
from pydantic import BaseModel, Field


class NoArguments(BaseModel):
    pass


class Friend(BaseModel):
    friend_id: int = Field(description="The friend's id: pass it to friend_busy_times.")
    username: str
    display_name: str
    friends_since: datetime | None = Field(description="When the request was accepted (null for older friendships).")


class FriendRequest(BaseModel):
    request_id: int
    username: str = Field(description="The other student's username.")
    display_name: str
    sent_at: datetime


class FriendList(BaseModel):
    friends: list[Friend] = Field(description="Accepted friends, by name. Empty when the student has none yet.")
    requests_received: list[FriendRequest] = Field(
        description="Requests other students sent that wait for this student's answer on the dashboard's Friends page."
    )
    requests_sent: list[FriendRequest] = Field(
        description="Requests this student sent that wait for the other's answer."
    )


class FriendBusyQuery(BaseModel):
    friend_id: int = Field(ge=1, description="The friend's id from list_friends (friend_id).")
    start_date: date = Field(description="First day, YYYY-MM-DD, in the campus time zone.")
    end_date: date = Field(description=f"Last day, YYYY-MM-DD, included; at most {MAX_DAYS} days in all.")


class BusyTime(BaseModel):
    start: datetime = Field(description="When the friend becomes busy, with the campus UTC offset.")
    end: datetime = Field(description="When the friend is free again.")


class FriendBusyTimes(BaseModel):
    friend_id: int
    start_date: date
    end_date: date
    time_zone: str = Field(description="The campus time zone the times are in.")
    busy: list[BusyTime] = Field(
        description="Busy blocks by start, overlapping ones merged; every time not covered is free. "
        "No course, room or meeting detail: ask the friend for those."
    )
