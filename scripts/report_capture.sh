#!/usr/bin/env bash
# The capture of a report folder: FOLDER/profile.ncu-rep, or FOLDER/profile.ncu-repz (Nsight
# Compute's zstd-compressed report, kept for large captures) when that is the one there. Prints
# the .ncu-rep path when neither exists (the caller's "no capture" message names it).
# Usage: report_capture.sh FOLDER
dir=${1:?usage: report_capture.sh FOLDER}
if [ ! -f "$dir/profile.ncu-rep" ] && [ -f "$dir/profile.ncu-repz" ]; then
  echo "$dir/profile.ncu-repz"
else
  echo "$dir/profile.ncu-rep"
fi
