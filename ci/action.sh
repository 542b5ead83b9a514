#!/usr/bin/env bash
# The steps of action.yml once mindrian is installed; the inputs arrive as environment variables
# (INPUT_* names below). tests/install runs this script as the Action would.
#
#   MINDRIAN_CHECK      "true": mindrian check --format github (annotations on the PR's lines)
#   MINDRIAN_DIFF       "true": mindrian diff [BASE] [HEAD], Markdown, into the job summary
#   MINDRIAN_DIFF_BASE, MINDRIAN_DIFF_HEAD   the revisions given to mindrian diff (may be empty)
#   MINDRIAN_COMMENT    "true": also post the diff as a pull-request comment (gh, GH_TOKEN)
#   MINDRIAN_PR         the pull request number to comment on
#   MINDRIAN_DIRECTORY  the project folder (default: the working directory)
# Exit status: mindrian check's (0 clean, 1 drift or a failed build), else diff's.
set -u

cd "${MINDRIAN_DIRECTORY:-.}" || exit 2
status=0

if [ "${MINDRIAN_CHECK:-true}" = "true" ]; then
  mindrian check --format github || status=$?
fi

if [ "${MINDRIAN_DIFF:-false}" = "true" ]; then
  report="$(mktemp)"
  revisions=()
  [ -n "${MINDRIAN_DIFF_BASE:-}" ] && revisions+=("$MINDRIAN_DIFF_BASE")
  [ -n "${MINDRIAN_DIFF_HEAD:-}" ] && revisions+=("$MINDRIAN_DIFF_HEAD")
  if mindrian diff "${revisions[@]}" >"$report"; then
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
      cat "$report" >>"$GITHUB_STEP_SUMMARY"
    else
      cat "$report"
    fi
    if [ "${MINDRIAN_COMMENT:-false}" = "true" ] && [ -n "${MINDRIAN_PR:-}" ] && [ -s "$report" ]; then
      gh pr comment "$MINDRIAN_PR" --body-file "$report" || status=$((status ? status : 1))
    fi
  else
    diff_status=$?
    echo "::error title=mindrian diff::mindrian diff exited with status $diff_status"
    [ "$status" -eq 0 ] && status=$diff_status
  fi
  rm -f "$report"
fi

exit "$status"
