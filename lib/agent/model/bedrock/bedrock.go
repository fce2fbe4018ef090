// Package bedrock is the Amazon Bedrock provider of the agent loop (envgap run --agent
// bedrock): the Converse API with tool use, through the official SDK (aws-sdk-go-v2
// bedrockruntime). Credentials and region come from the standard AWS chain (environment,
// shared config and credentials files, SSO, instance roles); --region overrides the
// region. The SDK's retries are off: model.Retry does the retrying.
package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/envgap/envgap/lib/agent/model"
)

// Options configure the provider.
type Options struct {
	Model  string
	Region string // empty: the AWS chain's
	// Endpoint replaces Bedrock's endpoint (tests; a VPC endpoint).
	Endpoint string
	// Credentials replace the chain's (tests).
	Credentials aws.CredentialsProvider
	HTTPClient  *http.Client
}

// Model is a model on Bedrock.
type Model struct {
	id  string
	cli *bedrockruntime.Client
}

// New loads the AWS configuration (no request is made) and returns the model. A region
// is required, from --region or the chain.
func New(ctx context.Context, o Options) (*Model, error) {
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("bedrock: --model is required")
	}
	var lo []func(*config.LoadOptions) error
	if o.Region != "" {
		lo = append(lo, config.WithRegion(o.Region))
	}
	if o.Credentials != nil {
		lo = append(lo, config.WithCredentialsProvider(o.Credentials))
	}
	if o.HTTPClient != nil {
		lo = append(lo, config.WithHTTPClient(o.HTTPClient))
	}
	lo = append(lo, config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }))
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("bedrock: no AWS region: give --region or set AWS_REGION (or a region in the AWS profile)")
	}
	cli := bedrockruntime.NewFromConfig(cfg, func(bo *bedrockruntime.Options) {
		if o.Endpoint != "" {
			bo.BaseEndpoint = aws.String(o.Endpoint)
		}
	})
	return &Model{id: o.Model, cli: cli}, nil
}

// Name is the model id.
func (m *Model) Name() string { return m.id }

// Complete sends one Converse request with the tools.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(m.id)}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	for _, msg := range req.Messages {
		var blocks []types.ContentBlock
		for _, r := range msg.ToolResults {
			content := r.Content
			if content == "" {
				content = "(no output)"
			}
			tr := types.ToolResultBlock{ToolUseId: aws.String(r.CallID),
				Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: content}}}
			if r.IsError {
				tr.Status = types.ToolResultStatusError
			}
			blocks = append(blocks, &types.ContentBlockMemberToolResult{Value: tr})
		}
		if msg.Text != "" {
			blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Text})
		}
		for _, tc := range msg.ToolCalls {
			var input map[string]any
			if err := json.Unmarshal(tc.Input, &input); err != nil || input == nil {
				input = map[string]any{}
			}
			blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(tc.ID), Name: aws.String(tc.Name), Input: document.NewLazyDocument(input)}})
		}
		if len(blocks) == 0 {
			blocks = append(blocks, &types.ContentBlockMemberText{Value: "(empty)"})
		}
		role := types.ConversationRoleUser
		if msg.Role == model.RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: blocks})
	}
	if len(req.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, t := range req.Tools {
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String(t.Name),
				Description: aws.String(t.Description), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(t.Schema)}}})
		}
		in.ToolConfig = tc
	}
	if req.MaxTokens > 0 {
		in.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(req.MaxTokens))}
	}
	out, err := m.cli.Converse(ctx, in)
	if err != nil {
		return nil, classify(ctx, err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, &model.Error{Kind: model.Retryable, Provider: "bedrock", Message: "the answer holds no message"}
	}
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant}}
	var text []string
	for _, b := range msg.Value.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			text = append(text, b.Value)
		case *types.ContentBlockMemberToolUse:
			input := json.RawMessage("{}")
			if b.Value.Input != nil {
				if j, err := b.Value.Input.MarshalSmithyDocument(); err == nil && len(j) > 0 && string(j) != "null" {
					input = j
				}
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, model.ToolCall{ID: aws.ToString(b.Value.ToolUseId), Name: aws.ToString(b.Value.Name), Input: input})
		}
	}
	resp.Message.Text = strings.Join(text, "\n")
	if out.Usage != nil {
		resp.Usage = model.Usage{InputTokens: int64(aws.ToInt32(out.Usage.InputTokens)), OutputTokens: int64(aws.ToInt32(out.Usage.OutputTokens))}
	}
	switch out.StopReason {
	case types.StopReasonToolUse:
		resp.Stop = model.StopToolUse
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		resp.Stop = model.StopEnd
	case types.StopReasonMaxTokens:
		resp.Stop = model.StopMaxTokens
	case types.StopReasonModelContextWindowExceeded:
		return nil, &model.Error{Kind: model.ContextTooLong, Provider: "bedrock", Message: "the model's context window is exceeded"}
	default:
		resp.Stop = model.StopOther
	}
	if len(resp.Message.ToolCalls) > 0 && resp.Stop != model.StopMaxTokens {
		resp.Stop = model.StopToolUse
	}
	return resp, nil
}

// classify turns the SDK's error into a model.Error. The SDK's messages never hold the
// secret key (a signature, at most the access key id in a service's own message).
func classify(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &model.Error{Provider: "bedrock", Kind: model.Fatal}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPResponse() != nil {
		e.Status = re.HTTPStatusCode()
		e.RetryAfter = model.ParseRetryAfter(re.HTTPResponse().Header.Get("Retry-After"), time.Now())
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "retrieve credentials") || strings.Contains(msg, "credential") || strings.Contains(msg, "token"):
			e.Kind, e.Message = model.Auth, "no usable AWS credentials in the chain: "+msg
		case e.Status >= 500 || e.Status == 0:
			e.Kind, e.Message = model.Retryable, "no answer: "+msg
		default:
			e.Message = msg
		}
		return e
	}
	code, msg := api.ErrorCode(), api.ErrorMessage()
	e.Message = code + ": " + msg
	low := strings.ToLower(msg)
	switch code {
	case "ThrottlingException", "ServiceUnavailableException", "InternalServerException", "ModelNotReadyException",
		"ModelTimeoutException", "ServiceQuotaExceededException", "InternalFailure", "ServiceUnavailable", "RequestTimeout":
		e.Kind = model.Retryable
		if code == "ServiceQuotaExceededException" && e.Status != 429 {
			e.Kind = model.Fatal // a quota to raise, not a moment to wait
		}
	case "AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException", "ExpiredToken",
		"InvalidSignatureException", "IncompleteSignature", "MissingAuthenticationToken", "InvalidClientTokenId":
		e.Kind = model.Auth
	case "ResourceNotFoundException":
		e.Kind = model.UnknownModel
	case "ValidationException":
		switch {
		case strings.Contains(low, "model identifier is invalid") || strings.Contains(low, "model id") || strings.Contains(low, "doesn't support") && strings.Contains(low, "model"):
			e.Kind = model.UnknownModel
		case strings.Contains(low, "too long") || strings.Contains(low, "context") && strings.Contains(low, "exceed"):
			e.Kind = model.ContextTooLong
		}
	default:
		if e.Status == 429 || e.Status >= 500 {
			e.Kind = model.Retryable
		} else if e.Status == 401 || e.Status == 403 {
			e.Kind = model.Auth
		}
	}
	return e
}
