# Sourced by the fetch-*.sh scripts: pinned_wheel NAME VERSION SHA256 DIR [WHEEL] prints the path
# of NAME==VERSION's wheel — WHEEL when given (a downloaded copy), else downloaded from PyPI into
# DIR — after checking its sha256 (exit 1 on a mismatch).
pinned_wheel() {
  local name=$1 version=$2 sha256=$3 dir=$4 wheel=${5:-}
  if [ -z "$wheel" ]; then
    python3 -m pip download --quiet --no-deps --dest "$dir" "$name==$version" >&2
    wheel=$(ls "$dir"/"${name//-/_}"-*.whl)
  fi
  local got
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$got" != "$sha256" ]; then
    echo "$wheel has sha256 $got, expected $sha256 ($name $version)" >&2
    return 1
  fi
  echo "$wheel"
}
