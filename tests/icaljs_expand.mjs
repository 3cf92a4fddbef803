// Expand a calendar with Mozilla's ical.js the way a calendar app does (issue 24, point 1).
//
//   node icaljs_expand.mjs ICAL_JS_MODULE FIRST LAST < feed.ics
//
// Prints a JSON list of [start, end] (UTC, ISO 8601) of every timed occurrence that starts between
// the dates FIRST and LAST (YYYY-MM-DD, both included, UTC); all-day events are left out (they
// hold no busy time). The zones come from the feed's own VTIMEZONE, as in any app: nothing else
// is registered, so a zone ical.js misreads shows as hours that differ.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, first, last] = process.argv.slice(2);
const ICAL = (await import(pathToFileURL(modulePath).href)).default;

const calendar = new ICAL.Component(ICAL.parse(readFileSync(0, "utf8")));
for (const zone of calendar.getAllSubcomponents("vtimezone")) {
  ICAL.TimezoneService.register(new ICAL.Timezone(zone));
}
const from = new Date(`${first}T00:00:00Z`);
const until = new Date(`${last}T00:00:00Z`);
until.setUTCDate(until.getUTCDate() + 1);

const events = calendar.getAllSubcomponents("vevent").map((component) => new ICAL.Event(component));
const masters = new Map(events.filter((event) => !event.isRecurrenceException()).map((e) => [e.uid, e]));
for (const event of events) {
  if (event.isRecurrenceException() && masters.has(event.uid)) masters.get(event.uid).relateException(event);
}

const found = [];
const keep = (start, end) => {
  if (start.isDate) return;
  const begins = start.toJSDate();
  if (begins >= from && begins < until) found.push([begins.toISOString(), end.toJSDate().toISOString()]);
};
for (const event of masters.values()) {
  if (!event.isRecurring()) {
    keep(event.startDate, event.endDate);
    continue;
  }
  const occurrences = event.iterator();
  for (let next = occurrences.next(); next; next = occurrences.next()) {
    if (next.toJSDate() >= until) break;
    const details = event.getOccurrenceDetails(next);
    keep(details.startDate, details.endDate);
  }
}
process.stdout.write(JSON.stringify(found.sort()));
