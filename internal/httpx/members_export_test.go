package httpx

// DuplicateMembersFull is DuplicateMembers without its fast path.
var DuplicateMembersFull = duplicateMembers

// DuplicateFree is DuplicateMembers' fast path.
var DuplicateFree = duplicateFree
