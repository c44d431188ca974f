// Package sreport is Slurm 22.05's sreport for slurm-lite: the reports a PI
// reads (cluster Utilization, AccountUtilizationByUser,
// UserUtilizationByAccount, user TopUsage, job SizesByAccount), computed
// from the daemon's job records.
//
// Pipeline: Main parses the command line (Parse), fetches the node and the
// job records over the socket (the same route and viewer rule as sacct),
// turns them into Jobs, and Compute attributes their time as slurmdbd's
// hourly rollup does (as_mysql_rollup.c); the print functions lay the
// result out byte for byte as sreport prints it
// (testdata/golden/sreport_*.txt, recorded by scripts/record-sreport).
//
// Glossary:
//   - window: [Start, End) of the report, rounded to whole hours as
//     slurmdb_report_set_start_end_time does; the default is yesterday.
//   - rolled up: slurmdbd charges time hour by hour, once the hour is over,
//     so a job still running counts up to the last whole hour before now,
//     and hours after it count nothing at all (neither used nor reported).
//   - allocated: TRES × seconds that jobs held in the window.
//   - planned: CPU × seconds that eligible jobs waited in the window
//     (Slurm's "reserved" time before 22.05), cut per hour to what was not
//     allocated; the excess is "overcommitted".
//   - reservations: slurm-lite has none yet, so no time is charged to
//     them and "PLND Down" and "Down" stay 0 (the node never goes down in
//     accounting here).
package sreport
