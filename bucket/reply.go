package bucket

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// Every reply of an S3 store passes through boundedReplies, the HTTP
// client the SDK is given (openS3): whatever asked, its body is read
// through a bound counted as it reads, so a chunked reply is bounded too.
const (
	// maxReply bounds a reply other than an object's or an error's: a
	// listing's page of 1,000 keys is about 300 KB.
	maxReply = 4 << 20
	// maxErrorReply bounds an error's reply (S3's XML error, a proxy's
	// page): a few hundred bytes say what went wrong.
	maxErrorReply = 64 << 10
	// maxReplyHeader bounds a reply's header, ETag and request ids with it.
	maxReplyHeader = 64 << 10
)

// replyBoundKey is the context key of withObjectBound.
type replyBoundKey struct{}

// withObjectBound lets the reply to a GET made with ctx carry up to n
// bytes: an object's bound and one more, so its reader sees one too large.
func withObjectBound(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, replyBoundKey{}, n)
}

// replyTooLong is the error of a reply's body read past its bound.
type replyTooLong struct {
	What  string // "error reply", "reply", "object"
	Limit int64
}

func (e *replyTooLong) Error() string {
	return fmt.Sprintf("the store's %s went past %d bytes, more than one may be; the rest was not read", e.What, e.Limit)
}

// boundedReplies is an HTTP client whose replies' bodies are bounded:
// maxErrorReply for an error (status 300 and above), the bound a read set
// for an object (withObjectBound), maxReply for any other.
type boundedReplies struct{ next aws.HTTPClient }

func (c boundedReplies) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	bound := &replyTooLong{What: "reply", Limit: maxReply}
	switch n, ok := req.Context().Value(replyBoundKey{}).(int64); {
	case resp.StatusCode >= 300:
		bound = &replyTooLong{What: "error reply", Limit: maxErrorReply}
	case ok:
		bound = &replyTooLong{What: "object", Limit: n}
	}
	resp.Body = &boundedBody{body: resp.Body, left: bound.Limit, over: bound}
	return resp, nil
}

// boundedBody is a reply's body that fails once more than its bound was
// sent: an error, not an end, so a cut reply is never read as whole. After
// it, it reads as ended: the SDK would log a line discarding each's rest.
type boundedBody struct {
	body io.ReadCloser
	left int64
	over error // nil once returned
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.over == nil {
		return 0, io.EOF
	}
	if b.left <= 0 {
		// One byte more tells a body that ends at the bound from one that
		// goes on.
		var one [1]byte
		n, err := b.body.Read(one[:])
		if n > 0 {
			err, b.over = b.over, nil
		}
		return 0, err
	}
	n, err := b.body.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// boundReplies, every S3 client's last option, reads its replies through
// boundedReplies over the client given (a test's) or the SDK's own, whose
// header it bounds too.
func boundReplies(o *s3.Options) {
	hc := o.HTTPClient
	switch c := hc.(type) {
	case nil:
		hc = awshttp.NewBuildableClient().WithTransportOptions(boundHeader)
	case *awshttp.BuildableClient:
		hc = c.WithTransportOptions(boundHeader)
	}
	o.HTTPClient = boundedReplies{hc}
}

func boundHeader(tr *http.Transport) { tr.MaxResponseHeaderBytes = maxReplyHeader }

// openS3 opens an s3:// URL's bucket as gocloud's URL opener does, with
// its parameters, but every reply bounded (after the options given).
func openS3(ctx context.Context, u *url.URL, given ...func(*s3.Options)) (*blob.Bucket, error) {
	q := u.Query()
	var bopts s3blob.Options
	var opts []func(*s3.Options)
	take := func(key string) string {
		v := q.Get(key)
		q.Del(key)
		return v
	}
	if v := take("ssetype"); v != "" {
		all := types.ServerSideEncryptionAes256.Values()
		i := slices.IndexFunc(all, func(t types.ServerSideEncryption) bool {
			return strings.EqualFold(string(t), v)
		})
		if i < 0 {
			return nil, fmt.Errorf("%q is not a valid value for \"ssetype\"", v)
		}
		bopts.EncryptionType = all[i]
	}
	bopts.KMSEncryptionID = take("kmskeyid")
	for _, p := range []struct {
		key string
		set func(*s3.Options, bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
	} {
		raw := take(p.key)
		if raw == "" {
			continue
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("invalid value for %q: %w", p.key, err)
		}
		opts = append(opts, func(o *s3.Options) { p.set(o, v) })
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	bopts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	// The store's errors are told in matrixgen's words; the SDK's own log
	// lines ("falling back to IMDSv1") would land among the command's.
	cfg.Logger = logging.Nop{}
	opts = append(append(opts, given...), boundReplies)
	return s3blob.OpenBucket(ctx, s3.NewFromConfig(cfg, opts...), u.Host, &bopts)
}
