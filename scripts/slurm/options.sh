# shellcheck shell=bash
# Sourced by sbatch.sh and submit_sweep.sh: the site's sbatch options, read
# from one place for every job mft's tools submit, and the sorting of the
# options a user gives.
#
# The options files hold sbatch options, one a line ("--account=proj1",
# "-p short", or a line copied from a batch script, "#SBATCH --qos=normal");
# other lines starting with '#' and blank lines are skipped. They are read
# in this order, a later value of an option winning:
#   1. the installation's: site-options beside this file
#      (scripts/slurm/site-options, or PREFIX/share/mft/slurm/site-options);
#   2. the user's: $MFT_SLURM_OPTIONS when set (empty: none), else
#      ${XDG_CONFIG_HOME:-$HOME/.config}/mft/slurm-options when it exists.
# An option whose variable is set in the environment (SBATCH_ACCOUNT,
# SBATCH_PARTITION, SBATCH_QOS, ... as sbatch itself reads them) is left to
# that variable; options given to the command come after both and win.

mft_options_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# sbatch's long options that take no value, or one only after '='.
mft_sbatch_flags=" contiguous exclusive get-user-env help hold ignore-pbs nice no-kill no-requeue overcommit
  oversubscribe parsable propagate quiet reboot requeue spread-job test-only usage use-min-nodes verbose version
  wait x11 "
# sbatch's short options that take no value.
mft_sbatch_short_flags=HIkOQsuvVWh
# The long names of short options.
declare -gA mft_sbatch_long=([A]=account [p]=partition [q]=qos [C]=constraint [M]=clusters [t]=time [J]=job-name
  [L]=licenses [D]=chdir [n]=ntasks [N]=nodes [c]=cpus-per-task [o]=output [e]=error [d]=dependency [a]=array
  [w]=nodelist [x]=exclude [G]=gpus [b]=begin [i]=input [m]=distribution [S]=core-spec [F]=nodefile)
# The variables sbatch reads in place of an option.
declare -gA mft_sbatch_variable=([account]=SBATCH_ACCOUNT [partition]=SBATCH_PARTITION [qos]=SBATCH_QOS
  [reservation]=SBATCH_RESERVATION [constraint]=SBATCH_CONSTRAINT [clusters]=SBATCH_CLUSTERS
  [time]=SBATCH_TIMELIMIT [mem]=SBATCH_MEM_PER_NODE [mem-per-cpu]=SBATCH_MEM_PER_CPU
  [mem-per-gpu]=SBATCH_MEM_PER_GPU [wckey]=SBATCH_WCKEY [gres]=SBATCH_GRES [exclusive]=SBATCH_EXCLUSIVE
  [export]=SBATCH_EXPORT [job-name]=SBATCH_JOB_NAME [gpus]=SBATCH_GPUS)
# The options that say where and on whose account a job runs: a sweep's
# collect job gets these of the options given for its array (not its size,
# time, output or dependencies).
mft_sbatch_placement=" account partition qos reservation clusters constraint wckey export chdir licenses
  mail-type mail-user "
# (one line each, for the word tests below)
mft_sbatch_flags=${mft_sbatch_flags//$'\n'/ } mft_sbatch_placement=${mft_sbatch_placement//$'\n'/ }

# mft_options_split WORD...: splits sbatch options into options. Sets
# mft_split_names (each option's long name), mft_split_first and
# mft_split_count (its words in "$@"); 2 and one line for a word that is no
# option or an option without its value.
mft_options_split() {
  mft_split_names=() mft_split_first=() mft_split_count=()
  local words=("$@") i=0 n name w
  while [ "$i" -lt "${#words[@]}" ]; do
    w=${words[$i]}
    n=1
    case "$w" in
    --?*=*) name=${w%%=*} name=${name#--} ;;
    --?*)
      name=${w#--}
      [[ "$mft_sbatch_flags" == *" $name "* ]] || n=2
      ;;
    -?)
      name=${mft_sbatch_long[${w:1:1}]:-${w:1:1}}
      [[ "$mft_sbatch_short_flags" == *"${w:1:1}"* ]] || n=2
      ;;
    -?*) name=${mft_sbatch_long[${w:1:1}]:-${w:1:1}} ;;
    *)
      echo "mft: '$w' is not an sbatch option (options start with '-': --account=NAME, -p PARTITION)" >&2
      return 2
      ;;
    esac
    if [ $((i + n)) -gt "${#words[@]}" ]; then
      echo "mft: the sbatch option $w needs a value" >&2
      return 2
    fi
    mft_split_names+=("$name") mft_split_first+=("$i") mft_split_count+=("$n")
    i=$((i + n))
  done
}

# mft_read_options FILE: appends the options of FILE to mft_sbatch_site,
# leaving out those whose SBATCH_ variable is set.
mft_read_options() {
  local file=$1 line number=0 words=() k var
  if [ ! -f "$file" ] || [ ! -r "$file" ]; then
    echo "mft: sbatch options file $file: no such readable file" >&2
    return 2
  fi
  while IFS= read -r line || [ -n "$line" ]; do
    number=$((number + 1))
    line=${line#"${line%%[![:space:]]*}"}
    line=${line%"${line##*[![:space:]]}"}
    case "$line" in
    "#SBATCH"*) line=${line#\#SBATCH} line=${line#"${line%%[![:space:]]*}"} ;;
    "" | "#"*) continue ;;
    esac
    if [[ "$line" == --*=* ]]; then
      words=("$line") # a value may hold spaces: --comment=two words
    else
      read -r -a words <<<"$line"
    fi
    mft_options_split "${words[@]}" 2>/dev/null || {
      echo "mft: $file, line $number: '$line' is not an sbatch option (one a line: --account=NAME)" >&2
      return 2
    }
    for k in "${!mft_split_names[@]}"; do
      var=${mft_sbatch_variable[${mft_split_names[$k]}]:-}
      [ -n "$var" ] && [ -n "${!var:-}" ] && continue
      mft_sbatch_site+=("${words[@]:${mft_split_first[$k]}:${mft_split_count[$k]}}")
    done
  done <"$file"
}

# mft_site_options: sets mft_sbatch_site to the options of the
# installation's and the user's files.
mft_site_options() {
  mft_sbatch_site=()
  local user
  if [ -f "$mft_options_here/site-options" ]; then
    mft_read_options "$mft_options_here/site-options" || return 2
  fi
  if [ -n "${MFT_SLURM_OPTIONS+set}" ]; then
    user=$MFT_SLURM_OPTIONS
  else
    user=${XDG_CONFIG_HOME:-$HOME/.config}/mft/slurm-options
    [ -e "$user" ] || user=
  fi
  if [ -n "$user" ]; then
    mft_read_options "$user" || return 2
  fi
}

# mft_placement_options WORD...: sets mft_sbatch_placed to the options
# among the sbatch options WORD... that say where and on whose account a
# job runs (mft_sbatch_placement).
mft_placement_options() {
  mft_sbatch_placed=()
  local words=("$@") k
  mft_options_split "$@" || return 2
  for k in "${!mft_split_names[@]}"; do
    [[ "$mft_sbatch_placement" == *" ${mft_split_names[$k]} "* ]] &&
      mft_sbatch_placed+=("${words[@]:${mft_split_first[$k]}:${mft_split_count[$k]}}")
  done
  return 0
}
