package safety

// defaultReadOnly fills the allow-list of options known to be read-only
// (Policy.ReadOnly, syntax in optSpec), from each program's manual (GNU
// coreutils, procps, util-linux, iproute2, systemd, git as on Debian). What
// is not here is not read-only for a Safe command: at least Medium.
func (p *Policy) defaultReadOnly() {
	p.AnyOptions = []string{"echo", "printf", "true", "false", ":", "test", "[", "sleep", "basename", "dirname",
		"seq", "exit", "return", "shift", "break", "continue", "pwd", "wait", "times", "jobs", "dirs", "getopts",
		"cd", "pushd", "popd", "type", "which", "whereis", "whoami", "tty", "arch", "nproc", "groups", "users",
		"id", "uname", "realpath", "readlink", "locale", "printenv", "umask", "ulimit", "uptime", "free",
		"lscpu", "lsmem", "lsmod", "lsblk", "vmstat", "iostat", "mpstat", "who", "w", "pidof", "lsb_release",
		"getconf", "pstree", "lsns", "sync", "unset", "ping", "traceroute", "tracepath", "hostnamectl",
		"timedatectl", "localectl", "loginctl", "networkctl", "resolvectl", "apachectl", "apache2ctl", "getent",
		"set", "let", "local", "export", "declare", "typeset", "readonly", "command", "builtin", "read",
		"mapfile", "readarray", "alias", "trap", "unalias", "hash", "ethtool"}
	r := p.ReadOnly
	// coreutils: reading and printing.
	r["cat"] = "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number --squeeze-blank --show-ends " +
		"--show-tabs --show-nonprinting --help --version"
	r["tac"] = "-b -r -s= --before --regex --separator="
	nums := "-n= -c= -q -v -z -# --lines= --bytes= --quiet --silent --verbose --zero-terminated"
	r["head"] = nums
	r["tail"] = nums + " -f -F -s= --follow=? --retry --pid= --sleep-interval= --max-unchanged-stats= +"
	r["nl"] = "-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter= " +
		"--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= " +
		"--no-renumber --number-separator= --starting-line-number= --number-width="
	r["wc"] = "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total= --files0-from=l"
	r["sort"] = "-b -d -f -g -i -M -h -n -R -r -V -c -C -k= -m -s -t= -u -z -S= --ignore-leading-blanks " +
		"--dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting --month-sort " +
		"--human-numeric-sort --numeric-sort --random-sort --reverse --version-sort --sort= --check=? --key= " +
		"--merge --stable --field-separator= --unique --zero-terminated --buffer-size= --parallel= --debug " +
		"-o=w --output=w --files0-from=l -T=w --temporary-directory=w"
	r["uniq"] = "-c -d -D -f= -i -s= -u -z -w= --count --repeated --all-repeated=? --skip-fields= --group=? " +
		"--ignore-case --skip-chars= --unique --zero-terminated --check-chars= ops=1"
	r["cut"] = "-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= --complement " +
		"--only-delimited --output-delimiter= --zero-terminated"
	r["tr"] = "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"
	r["paste"] = "-d= -s -z --delimiters= --serial --zero-terminated"
	r["join"] = "-a= -e= -i -j= -o= -t= -v= -1= -2= --check-order --nocheck-order --header --ignore-case " +
		"--zero-terminated"
	r["comm"] = "-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z --zero-terminated"
	r["fold"] = "-b -s -w= --bytes --spaces --width="
	r["expand"] = "-i -t= --initial --tabs="
	r["unexpand"] = "-a -t= --all --first-only --tabs="
	r["rev"] = "-0 --zero"
	r["column"] = "-t -s= -o= -c= -x -n -e -N= -R= -H= -J -l= -L -T= -W= -E= -d -r= -i= -p= --table " +
		"--separator= --output-separator= --output-width= --fillrows --table-columns= --table-right= " +
		"--table-hide= --json --keep-empty-lines --table-noheadings --table-name="
	r["od"] = "-A= -j= -N= -S= -t= -v -w= -a -b -c -d -f -i -l -o -s -x --address-radix= --endian= " +
		"--skip-bytes= --read-bytes= --strings=? --format= --output-duplicates --width=? --traditional"
	r["hexdump"] = "-b -c -C -d -o -x -e= -n= -s= -v -L=? --one-byte-octal --one-byte-char --canonical " +
		"--two-bytes-decimal --two-bytes-octal --two-bytes-hex --format= --length= --skip= --no-squeezing"
	r["xxd"] = "-a -autoskip -b -bits -C -capitalize -c= -cols= -E -EBCDIC -e -g= -groupsize= -i -include " +
		"-l= -len= -n= -name= -o= -p -ps -postscript -plain -s= -seek= -u -d -R= ops=1"
	r["strings"] = "-a -d -f -n= -t= -e= -w -s= -# --all --data --print-file-name --bytes= --radix= " +
		"--encoding= --include-all-whitespace --output-separator="
	r["base64"] = "-d -i -w= --decode --ignore-garbage --wrap= ops=1"
	r["md5sum"] = "-b -t -z --binary --text --zero --tag --untagged -c=l --check=l --ignore-missing --quiet " +
		"--status --strict -w --warn"
	for _, s := range []string{"sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"} {
		r[s] = r["md5sum"] + " -a= --algorithm= -l= --length= --base64 --raw"
	}
	r["diff"] = "-q -s -c -C= -u -U= -e -n -y -W= -l -t -T -i -E -Z -b -w -B -I= -a -d -N -p -F= -x= " +
		"--brief --report-identical-files --context=? --unified=? --ed --normal --rcs --side-by-side " +
		"--width= --left-column --suppress-common-lines --show-c-function --show-function-line= --label= " +
		"--expand-tabs --initial-tab --suppress-blank-empty --ignore-case --ignore-tab-expansion " +
		"--ignore-trailing-space --ignore-space-change --ignore-all-space --ignore-blank-lines " +
		"--ignore-matching-lines= --text --strip-trailing-cr --minimal --speed-large-files --color=? " +
		"--exclude= --new-file --unidirectional-new-file --no-dereference --palette= --tabsize= ops=2"
	r["cmp"] = "-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent ops=2"
	r["ls"] = "-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I= -k -l -L -m -n -N -o -p -q -Q -r -R -s -S " +
		"-t -T= -u -U -v -w= -x -X -Z -1 --all --almost-all --author --escape --block-size= --ignore-backups " +
		"--color=? --directory --dired --classify=? --file-type --format= --full-time --group-directories-first " +
		"--no-group --human-readable --si --dereference-command-line --dereference-command-line-symlink-to-dir " +
		"--hide= --hyperlink=? --indicator-style= --inode --ignore= --kibibytes --dereference --numeric-uid-gid " +
		"--literal --hide-control-chars --show-control-chars --quote-name --quoting-style= --reverse " +
		"--recursive --size --sort= --time= --time-style= --tabsize= --width= --context --zero"
	r["stat"] = "-L -f -c= -t --dereference --file-system --format= --printf= --terse --cached="
	r["du"] = "-0 -a -b -B= -c -d= -D -h -H -k -l -L -m -P -s -S -t= -x -X=r --null --all --apparent-size " +
		"--block-size= --bytes --total --max-depth= --dereference-args --human-readable --inodes " +
		"--count-links --dereference --no-dereference --separate-dirs --si --summarize --threshold= " +
		"--time=? --time-style= --exclude-from=r --exclude= --one-file-system --files0-from=l"
	r["df"] = "-a -B= -h -H -i -k -l -P -t= -T -x= --all --block-size= --human-readable --si --inodes " +
		"--local --no-sync --output=? --portability --print-type --sync --total --type= --exclude-type="
	r["date"] = "-u -R -I=? -d= --date= --debug --iso-8601=? --rfc-email --rfc-3339= --resolution --utc " +
		"--universal -r=r --reference=r -f=l --file=l +"
	r["file"] = "-b -c -E -h -i -k -l -L -N -n -p -r -s -S -z -Z -0 -e= -F= -P= --brief --checking-printout " +
		"--exclude= --exclude-quiet= --extension --keep-going --list --dereference --mime --mime-type " +
		"--mime-encoding --no-dereference --no-pad --no-buffer --preserve-date --raw --special-files " +
		"--no-sandbox --uncompress --uncompress-noreport --separator= --print0 --parameter= -f=l --files-from=l " +
		"-m=r --magic-file=r"
	r["namei"] = "-l -m -n -o -v -x --long --modes --nosymlinks --owners --vertical --mountpoints"
	r["getfacl"] = "-a -d -c -e -E -s -R -L -P -t -n -p --access --default --omit-header --all-effective " +
		"--no-effective --skip-base --recursive --logical --physical --tabular --numeric --absolute-names"
	r["lsattr"] = "-R -V -a -d -l -p -v"
	r["tree"] = "-a -d -l -f -x -L= -P= -I= -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -C -n -J -X " +
		"--noreport --dirsfirst --filelimit= --du --si --prune --matchdirs --ignore-case --charset= " +
		"--sort= --gitignore --metafirst --info --timefmt="
	r["find"] = "-name= -iname= -path= -ipath= -type= -xtype= -newer=r -user= -group= -perm= -size= -mtime= " +
		"-mmin= -atime= -amin= -ctime= -cmin= -maxdepth= -mindepth= -regex= -iregex= -printf= -wholename= " +
		"-iwholename= -lname= -ilname= -samefile=r -uid= -gid= -links= -inum= -regextype= -newermt= " +
		"-newerct= -newerat= -used= -fstype= -anewer=r -cnewer=r -print -print0 -ls -prune -quit -empty " +
		"-executable -readable -writable -nouser -nogroup -true -false -not -a -o -and -or -H -L -P -D= " +
		"-depth -d -mount -xdev -follow -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -warn " +
		"-nowarn -help -version"
	// searching.
	grep := "-E -F -G -P -e= -f=r -i -y --no-ignore-case -v -w -x -c --color=? --colour=? -L -l -m= -o -q -s " +
		"-b -H -h --label= -n -T -u -Z -z -A= -B= -C= -# -a -I -D= --binary-files= --exclude= " +
		"--exclude-from=r --exclude-dir= --include= -U --binary --null-data --null --line-buffered " +
		"--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file=r --ignore-case " +
		"--word-regexp --line-regexp --no-messages --invert-match --max-count= --byte-offset --line-number " +
		"--with-filename --no-filename --only-matching --quiet --silent --files-with-matches " +
		"--files-without-match --count --initial-tab --after-context= --before-context= --context=? --text " +
		"--devices= -r -R --recursive --dereference-recursive"
	for _, g := range []string{"grep", "egrep", "fgrep", "zgrep"} {
		r[g] = grep // -d/--directories (recurse reads whole trees) is not here
	}
	r["rg"] = "-e= -f=r -i -s -S -v -w -x -c -l -L -n -N -H -I -o -q -F -U -a -u -uu -uuu -A= -B= -C= -m= " +
		"-g= -t= -T= -j= -M= --glob= --iglob= --type= --type-not= --regexp= --file=r --ignore-case " +
		"--case-sensitive --smart-case --invert-match --word-regexp --line-regexp --count --count-matches " +
		"--files-with-matches --files-without-match --line-number --no-line-number --with-filename " +
		"--no-filename --only-matching --quiet --fixed-strings --multiline --text --hidden --no-ignore " +
		"--max-count= --max-depth= --max-columns= --color= --colors= --heading --no-heading --vimgrep " +
		"--json --stats --sort= --sortr= --files --type-list --follow --trim --column --null " +
		"--after-context= --before-context= --context= --threads= --max-filesize= --one-file-system " +
		"--passthru --no-messages --debug --unrestricted"
	r["jq"] = "-r -j -a -c -n -e -s -S -C -M -R --raw-output --join-output --ascii-output --compact-output " +
		"--null-input --exit-status --slurp --sort-keys --color-output --monochrome-output --raw-input " +
		"--tab --indent= --arg= --argjson= --slurpfile=r --rawfile=r --args --jsonargs --seq --stream " +
		"-f=r --from-file=r --raw-output0"
	r["awk"] = "-F= -v= --field-separator= --assign= -e= --source= -f=r --file=r"
	for _, a := range []string{"gawk", "mawk", "nawk"} {
		r[a] = r["awk"] + " --posix --traditional --re-interval --characters-as-bytes --sandbox -S -P"
	}
	r["sed"] = "-n -e= -f=r -E -r -s -u -z -l= --quiet --silent --expression= --file=r --regexp-extended " +
		"--separate --unbuffered --null-data --line-length= --posix --debug --sandbox"
	r["less"] = "-N -n -S -R -r -X -F -i -I -M -m -E -e -f -g -G -J -q -Q -s -w -W -z= -x= -K -# " +
		"--LINE-NUMBERS --line-numbers --chop-long-lines --RAW-CONTROL-CHARS --raw-control-chars --no-init " +
		"--quit-if-one-screen --ignore-case --IGNORE-CASE --LONG-PROMPT --long-prompt --QUIT-AT-EOF " +
		"--quit-at-eof --force --hilite-search --HILITE-SEARCH --status-column --quiet --silent " +
		"--squeeze-blank-lines --hilite-unread --HILITE-UNREAD --quit-on-intr --no-histdups"
	r["more"] = "-d -l -f -p -c -s -u -n= -# --silent --logical --no-pause --print-over --clean-print " +
		"--squeeze --plain --lines="
	for _, z := range []string{"zcat", "bzcat", "xzcat"} {
		r[z] = "-f -q -v -k -c -d --force --quiet --verbose --keep --stdout --decompress"
	}
	// processes, sockets, the kernel.
	psOpts := "-A -a -d -e -N -T -r -x -f -F -j -l -M -w -y -H -L -m -V -c -Z -o= -O= -p= -q= -u= -U= -g= " +
		"-G= -C= -s= -t= --pid= --ppid= --quick-pid= --sid= --tty= --user= --User= --group= --Group= " +
		"--sort= --format= --forest --headers --no-headers --cols= --columns= --lines= --rows= --width= " +
		"--cumulative --deselect --context --info --help --version"
	r["ps"] = psOpts
	r["pgrep"] = "-d= -l -a -v -c -f -g= -G= -i -n -o -O= -P= -s= -t= -u= -U= -x -w -r= --delimiter= " +
		"--list-name --list-full --inverse --count --full --pgroup= --group= --ignore-case --newest --oldest " +
		"--older= --parent= --session= --terminal= --euid= --uid= --exact --ns= --nslist= --lightweight " +
		"--runstates= --cgroup= --env="
	r["top"] = "-b -n= -d= -p= -u= -U= -o= -c -H -i -S -s -w=? -1 -E= -e= -O"
	r["htop"] = "-C -d= -p= -s= -t -u= -M --no-color --delay= --pid= --sort-key= --tree --user= --no-mouse"
	r["ss"] = "-h -V -H -n -r -a -l -o -e -m -p -i -s -E -Z -z -b -4 -6 -0 -t -u -d -w -x -S -M -O -f= -A= " +
		"--help --version --no-header --numeric --resolve --all --listening --options --extended --memory " +
		"--processes --info --summary --events --context --contexts --bpf --ipv4 --ipv6 --packet --tcp --udp " +
		"--dccp --raw --unix --sctp --vsock --mptcp --tipc --oneline --family= --query= --socket= " +
		"--threads --cgroup --tos --xdp"
	r["netstat"] = "-a -t -u -w -x -l -n -p -e -o -r -i -s -c -g -M -v -W -4 -6 -A= --all --tcp --udp --raw " +
		"--unix --listening --numeric --program --extend --timers --route --interfaces --statistics " +
		"--continuous --groups --masquerade --verbose --wide --numeric-hosts --numeric-ports --numeric-users"
	r["lsof"] = "-a -b -C -h -l -n -N -P -R -t -U -V -w -X -Q -i=? -p= -u= -c= -g= -d= -s= -r= -F= " +
		"+c= -x -M -S= -T= -E +E -o -O +L -L"
	r["sysctl"] = "-a -A -X -n -N -e -b -r= -q --all --values --names --binary --ignore --pattern= --quiet " +
		"-d --deprecated"
	r["dmesg"] = "-H -T -k -x -L=? -l= -f= -t -r -u -S -w -W -e -d -P --human --ctime --kernel --decode " +
		"--color=? --level= --facility= --notime --raw --userspace --syslog --follow --follow-new --reltime " +
		"--show-delta --nopager --since= --until= --time-format= --json --noescape"
	r["blkid"] = "-c= -d -g -h -i -k -l -L= -n= -o= -p -s= -t= -U= -u= -V --cache-file= --no-encoding " +
		"--garbage-collect --info --list-filesystems --list-one --label= --match-types= --output= --probe " +
		"--match-tag= --match-token= --uuid= --usages="
	r["mount"] = "-l -t= --show-labels --types="
	r["swapon"] = "--show=? -s --summary --noheadings --raw --bytes -h --help -V --version"
	r["ip"] = "-br -brief -s -stats -statistics -d -details -4 -6 -0 -f= -family= -o -oneline -r -resolve " +
		"-j -json -p -pretty -c=? -color=? -h -human -human-readable -iec -n= -netns= -t -timestamp -ts " +
		"-tshort -N -Numeric -a -all"
	r["kill"] = "-l -L --list --table"
	r["crontab"] = "-l -u="
	r["last"] = "-a -d -F -i -n= -R -s= -t= -p= -w -x -# --hostlast --dns --fulltimes --ip --limit= " +
		"--nohostname --since= --until= --present= --fullnames --system --time-format="
	// systemd.
	sysctlOpts := "-a -l -q -t= -p= -P= -n= -o= -r --all --full --no-pager --no-legend --plain --quiet " +
		"--type= --state= --property= --value --lines= --output= --recursive --reverse --after --before " +
		"--with-dependencies --failed --show-types --user --system --now --no-ask-password --global " +
		"--legend= --timestamp= --check-inhibitors= -H= --host= -M= --machine="
	r["systemctl"] = sysctlOpts
	r["journalctl"] = "-a -b=? -e -f -k -l -m -n= -o= -p= -q -r -t= -u= -x -S= -U= -g= -F= -N --all " +
		"--boot=? --pager-end --follow --dmesg --full --merge --lines= --output= --priority= --quiet --reverse " +
		"--identifier= --unit= --user-unit= --catalog --since= --until= --grep= --case-sensitive=? " +
		"--field= --fields --no-pager --no-full --no-hostname --no-tail --utc --user --system --list-boots " +
		"--disk-usage --facility= --output-fields= --header --show-cursor --cursor= --after-cursor= " +
		"--invocation= --verify --this-boot"
	r["service"] = "--status-all"
	// packages, firewall, disks.
	r["dpkg"] = "-l -L -s -S -p --list --listfiles --status --search --print-avail --get-selections " +
		"--print-architecture --print-foreign-architectures --compare-versions --help --version " +
		"--no-pager -W --show --showformat= -f="
	r["rpm"] = "-q -a -i -l -f -c -d -R -p -V --query --all --info --list --file --configfiles --docfiles " +
		"--requires --provides --changelog --qf= --queryformat= --whatprovides --whatrequires --verify"
	r["apt-cache"] = "-n -f -a -i -q --names-only --full --all-versions --installed --quiet --recurse " +
		"--no-all-versions --important --no-pre-depends"
	r["apt"] = "--installed --upgradable --all-versions -a -q -qq --quiet --full --names-only -f"
	r["apt-get"] = "-s --simulate --just-print --dry-run --no-act --recon -q -qq --quiet"
	r["iptables"] = "-L -S -n -v -x -t= --list --list-rules --numeric --verbose --exact --line-numbers " +
		"--table= -w=? --wait=?"
	r["ip6tables"] = r["iptables"]
	r["nft"] = "-a -n -s -j -N -S -t -y --handle --numeric --stateless --json --reversedns --service " +
		"--terse --numeric-priority --numeric-protocol --numeric-time"
	r["fdisk"] = "-l --list -x --list-details -b= -u=? -o= --output= --bytes"
	r["parted"] = "-l --list -s --script -m --machine -f --fix -a="
	for _, d := range []string{"docker", "podman"} {
		r[d+" ps"] = "-a -q -s -n= -l -f= --all --quiet --size --last= --latest --filter= --format= " +
			"--no-trunc --external --pod --sort= --ns"
		r[d+" images"] = "-a -q -f= --all --quiet --filter= --format= --digests --no-trunc --tree"
		r[d+" logs"] = "-f -t -n= --follow --timestamps --tail= --since= --until= --details --names"
		r[d+" inspect"] = "-f= -s --format= --size --type="
		r[d+" stats"] = "-a --all --no-stream --no-trunc --format="
		r[d+" top"] = ""
		r[d+" port"] = ""
		r[d+" version"] = "-f= --format="
		r[d+" info"] = "-f= --format="
		r[d+" history"] = "-q -H --quiet --human --no-trunc --format="
		r[d+" diff"] = ""
		r[d+" events"] = "-f= --filter= --since= --until= --format="
		r[d+" search"] = "-f= --filter= --limit= --no-trunc --format="
		r[d+" compose config"] = "--services --volumes --images --profiles --networks --hash= -q --quiet" // safety/inspect.go
	}
	r["docker-compose config"] = r["docker compose config"]
	// git: options of the safe subcommands. Pagers, external diff and
	// textconv drivers, --output and --upload-pack are not here.
	gitLog := "-p -u -s -z -n= -# --patch --no-patch --stat=? --numstat --shortstat --name-only --name-status " +
		"--summary --oneline --graph --decorate=? --no-decorate --abbrev-commit --abbrev=? --all --branches=? " +
		"--tags=? --remotes=? --author= --committer= --grep= --since= --until= --after= --before= " +
		"--max-count= --skip= --reverse --merges --no-merges --first-parent --format= --pretty=? --date= " +
		"--relative-date --follow --full-history --color=? --no-color --word-diff=? --cached --staged " +
		"--stat-width= --ignore-all-space --ignore-space-change -w -b --diff-filter= --find-renames=? -M=? " +
		"--no-renames --minimal --patience --histogram --unified= -U= --no-ext-diff --no-textconv " +
		"--ignore-blank-lines --raw --full-index --binary --left-right --cherry-pick --boundary --topo-order " +
		"--date-order --author-date-order --show-signature --simplify-by-decoration --source --dirstat=? " +
		"-L= --exit-code --quiet --check -i --regexp-ignore-case -E --extended-regexp -F --fixed-strings " +
		"-S= -G= --pickaxe-all --show-notes=? --no-notes --expand-tabs=? --mailmap --use-mailmap -1 -m -c " +
		"--cc --name-only --submodule=? --ignore-submodules=? --src-prefix= --dst-prefix= --no-prefix " +
		"--relative=? --text -a -R --function-context -W --color-moved=? --color-words=? --ita-invisible-in-index"
	for _, sub := range []string{"log", "show", "diff", "whatchanged", "shortlog"} {
		r["git "+sub] = gitLog
	}
	r["git status"] = "-s -b -u=? -z --short --branch --porcelain=? --long --show-stash --verbose -v " +
		"--untracked-files=? --ignored=? --ignore-submodules=? --column=? --no-column --ahead-behind " +
		"--no-ahead-behind --renames --no-renames --find-renames=?"
	r["git ls-files"] = "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored " +
		"--stage --unmerged --killed --directory --no-empty-directory --exclude= -x= --exclude-standard " +
		"--error-unmatch --full-name --recurse-submodules --abbrev=? --debug --eol --deduplicate --format="
	r["git ls-tree"] = "-d -r -t -l -z --long --name-only --name-status --object-only --full-name " +
		"--full-tree --abbrev=? --format="
	r["git ls-remote"] = "-h -t -q --heads --tags --refs --quiet --get-url --symref --sort= -b --branches"
	r["git rev-parse"] = "--short=? --verify -q --quiet --abbrev-ref=? --symbolic --symbolic-full-name " +
		"--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir --git-common-dir " +
		"--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --all " +
		"--branches=? --tags=? --remotes=? --sq --sq-quote --default= --revs-only --no-revs --flags " +
		"--no-flags --show-object-format=? --show-superproject-working-tree --local-env-vars --path-format= " +
		"--since= --until= --show-ref-format"
	r["git rev-list"] = "--count --all --max-count= -n= --since= --until= --reverse --first-parent " +
		"--merges --no-merges --left-right --objects --topo-order --date-order -# --abbrev-commit " +
		"--branches=? --tags=? --remotes=? --author= --grep= --parents --children --boundary"
	r["git describe"] = "--tags --all --long --always --abbrev= --exact-match --dirty=? --broken=? " +
		"--match= --exclude= --contains --first-parent --candidates="
	r["git blame"] = "-b -c -e -f -l -n -p -s -t -w -M=? -C=? -L= --root --show-stats --porcelain " +
		"--line-porcelain --incremental --show-name --show-number --show-email --date= --abbrev= " +
		"--minimal --reverse --first-parent --progress --no-progress --color-lines --color-by-age " +
		"--ignore-rev= --since="
	r["git grep"] = "-i -I -w -v -h -H -l -L -n -c -o -q -z -E -F -G -P -e= -f=r --cached --no-index " +
		"--untracked --recurse-submodules --ignore-case --word-regexp --invert-match --full-name " +
		"--extended-regexp --fixed-strings --basic-regexp --perl-regexp --line-number --column " +
		"--files-with-matches --name-only --files-without-match --count --only-matching --quiet --null " +
		"--break --heading -p --show-function -W --function-context -A= -B= -C= --max-depth= --threads= " +
		"--and --or --not --all-match --color=? --no-color --exclude-standard --no-exclude-standard --text -a"
	r["git cat-file"] = "-t -s -e -p --batch=? --batch-check=? --batch-all-objects --follow-symlinks " +
		"--unordered --buffer -Z --allow-unknown-type --mailmap --use-mailmap"
	r["git branch"] = "-a -r -v -vv -l --list --all --remotes --verbose --contains=? --no-contains=? " +
		"--merged=? --no-merged=? --points-at= --sort= --format= --color=? --no-color --column=? " +
		"--no-column --show-current -i --ignore-case --abbrev=? --no-abbrev"
	r["git tag"] = "-l --list -n=? --contains=? --no-contains=? --merged=? --no-merged=? --points-at= " +
		"--sort= --format= --color=? --column=? --no-column -i --ignore-case -v --verify"
	r["git remote"] = "-v --verbose"
	r["git remote show"] = "-n"
	r["git remote get-url"] = "--push --all"
	r["git stash list"] = gitLog
	r["git stash show"] = gitLog
	r["git reflog"] = gitLog
	r["git reflog show"] = gitLog
	r["git config"] = "-l --list --get= --get-all= --get-regexp= --get-urlmatch= --global --system --local " +
		"--worktree --show-origin --show-scope --name-only -z --null --type= --bool --int --bool-or-int " +
		"--path --expiry-date --default= --includes --no-includes"
	r["git show-ref"] = "--head --heads --tags --branches --verify --exists -d --dereference -s --hash=? " +
		"--abbrev=? -q --quiet"
	r["git for-each-ref"] = "--count= --sort= --format= --color=? --shell --perl --python --tcl --points-at= " +
		"--merged=? --no-merged=? --contains=? --no-contains=? --ignore-case --omit-empty --exclude="
	r["git count-objects"] = "-v -H --verbose --human-readable"
	r["git merge-base"] = "-a --all --octopus --independent --is-ancestor --fork-point"
	r["git name-rev"] = "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always"
	r["git check-ignore"] = "-q -v -n -z --quiet --verbose --non-matching --no-index"
	r["git var"] = "-l"
	r["git help"] = "-a -g -i -m -w --all --guides --info --man --web --config --verbose"
	r["git version"] = "--build-options"
	// git's own options before the subcommand: -C and --git-dir move where
	// it works (checked as paths by the classifier); -c, --exec-path,
	// --config-env and pagers are not read-only.
	r["git"] = "-C=r --no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs " +
		"--noglob-pathspecs --icase-pathspecs --no-optional-locks --bare --version --help"
	// openssl: inspecting.
	r["openssl x509"] = "-in=r -inform= -noout -text -subject -issuer -dates -startdate -enddate -serial " +
		"-fingerprint -sha1 -sha256 -md5 -nameopt= -ext= -purpose -pubkey -modulus -hash -subject_hash " +
		"-issuer_hash -email -ocsp_uri -checkend= -certopt= -noverify"
	r["openssl verify"] = "-CAfile=r -CApath=r -untrusted=r -verbose -show_chain -purpose= -partial_chain"
	r["openssl version"] = "-a -v -b -o -f -p -d -e -m -r -c"
	r["openssl list"] = "-digest-commands -cipher-commands -cipher-algorithms -digest-algorithms " +
		"-public-key-algorithms -commands -1"
	r["openssl crl"] = "-in=r -inform= -noout -text -issuer -lastupdate -nextupdate -hash -fingerprint"
	r["openssl asn1parse"] = "-in=r -inform= -i -dump -offset= -length="
	r["openssl ciphers"] = "-v -V -s -tls1_2 -tls1_3"
	r["openssl dgst"] = "-sha1 -sha256 -sha512 -md5 -r -hex -c"
	// kubectl's listings (--kubeconfig is read like any file).
	r["kubectl"] = "-n= --namespace= -o= --output= -l= --selector= -A --all-namespaces -w --watch " +
		"--context= --cluster= --user= --field-selector= --show-labels --sort-by= --no-headers --tail= -f " +
		"--follow -c= --container= --previous -p --since= --since-time= --timestamps --limit-bytes= " +
		"--all-containers --prefix --max-log-requests= -L= --label-columns= --chunk-size= --ignore-not-found " +
		"--show-kind --show-managed-fields --template= --request-timeout= -v= --kubeconfig=r --subresource= " +
		"--watch-only --output-watch-events --recursive -R --raw="
	r["lspci"] = "-v -vv -vvv -k -n -nn -t -s= -d= -D -x -xx -xxx -m -mm -b -q -qq -P -PP"
	r["lsusb"] = "-v -t -s= -d= -V --verbose --tree"
	r["dmidecode"] = "-t= --type= -s= --string= -q --quiet -u --dump -H= --handle= --oem-string= --no-quirks"
	r["lshw"] = "-short -businfo -html -xml -json -class= -C= -sanitize -numeric -quiet -notime -disable= " +
		"-enable="
	r["sar"] = "-u -r -b -d -q -w -W -B -S -H -A -h -p -t -x -n= -P= -I= -s= -e= -f=r -i= -m= -y -v -F -# "
	r["pidstat"] = "-u -r -d -w -t -h -l -I -s -v -R -H -p= -C= -G= -U=? -T= -#"
	r["lastlog"] = "-b= -t= -u= -R= --before= --time= --user="
	r["sensors"] = "-A -u -j -f -c=r --no-adapter --fahrenheit --config-file=r"
	r["nstat"] = "-a -s -z -j -p -d= -t= -V --ignore --json --pretty --zeros --absolute --nooutput"
	r["findmnt"] = "-A -a -b -c -D -d= -e -f -i -J -k -l -M= -m -N= -n -O= -o= -P -p=? -R -r -S= -s -T= -t= " +
		"-U -u -v -w= -x -y --all --ascii --bytes --canonicalize --df --direction= --evaluate --first-only " +
		"--invert --json --kernel --list --mountpoint= --mtab --task= --noheadings --options= --output= " +
		"--output-all --pairs --poll=? --real --pseudo --raw --types= --submounts --source= --target= --tree " +
		"--shadowed --uniq --verify --verbose --fstab --timeout= --nocanonicalize --notruncate"
	r["dig"] = "-4 -6 -t= -c= -x= -p= -q= -b= -m -u -r -h -v +"
	r["nslookup"] = "-type=? -query=? -debug -nodebug -port=? -timeout=? -retry=? -norecurse -vc -class=?"
	r["host"] = "-a -c= -C -d -l -N= -r -R= -s -t= -T -U -v -V -w -W= -4 -6 -m="
	r["mtr"] = "-4 -6 -r -w -c= -n -b -j -x -C -l -p -t -o= -i= -s= -m= -f= -T -u -z --report --report-wide " +
		"--report-cycles= --no-dns --show-ips --json --xml --csv --raw --split --curses --tcp --udp --aslookup " +
		"--interval= --psize= --max-ttl= --first-ttl= --order= --displaymode="
	// operator tools: listings.
	r["helm list"] = "-A --all-namespaces -a --all -n= --namespace= -o= --output= -q --short -d --date -r " +
		"--reverse --deployed --failed --pending --uninstalled --superseded -l= --selector= --kube-context= " +
		"--max= --offset= --filter= --time-format= --no-headers"
	r["helm ls"] = r["helm list"]
	r["helm status"] = "-n= --namespace= -o= --output= --revision= --show-desc --show-resources --kube-context="
	r["helm history"] = "-n= --namespace= -o= --output= --max= --kube-context="
	r["nginx"] = "-t -T -v -V -q -c=r -p= -e= -g="
	r["apachectl"] = "-t -S -M -v -V -l -L -D="
	r["apache2ctl"] = r["apachectl"]
	r["virsh"] = "-c= --connect= -r --readonly -q --quiet"
	r["virsh list"] = "--all --inactive --state-running --state-paused --state-shutoff --name --uuid --title " +
		"--table --persistent --transient --autostart --no-autostart"
	r["virsh dominfo"] = ""
	r["redis-cli"] = "-h= -p= -n= --raw --no-raw --csv -c --no-auth-warning"
	r["zfs list"] = "-r -d= -H -p -o= -s= -S= -t="
	r["zpool status"] = "-v -x -P -L -g -p -t -T= -i -D -e -s"
	r["zpool list"] = "-H -g -L -p -P -T= -v -o="
	r["terraform show"] = "-json -no-color"
	r["terraform output"] = "-json -raw -no-color -state=r"
	r["terraform version"] = "-json"
	r["psql"] = "-l --list"
	r["hostname"] = "-f -s -i -I -d -a -A -y --fqdn --long --short --ip-address --all-ip-addresses --domain " +
		"--alias --all-fqdns"
}
